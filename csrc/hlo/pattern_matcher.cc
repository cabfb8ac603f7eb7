// Pattern matcher helpers that need a literal's values.
#include "hlo/pattern_matcher.h"

#include <cmath>

namespace uir::hlo {
namespace {

// The value all elements of an array literal share, or nullopt.
std::optional<double> UniformValue(const Literal& l) {
  const Shape& s = l.shape();
  if (!s.IsArray() || IsComplex(s.element_type())) return std::nullopt;
  const int64_t n = l.element_count();
  if (n == 0) return std::nullopt;
  const uint64_t first = l.GetBits(0);
  for (int64_t i = 1; i < n; ++i) {
    if (l.GetBits(i) != first) return std::nullopt;
  }
  return l.GetDouble(0);
}

// The constant under a chain of broadcasts (or the instruction itself).
const HloInstruction* ConstantSource(const HloInstruction* inst) {
  while (inst->opcode() == HloOpcode::kBroadcast) inst = inst->operand(0);
  return inst->opcode() == HloOpcode::kConstant && inst->has_literal() ? inst : nullptr;
}

}  // namespace

bool IsConstantWithValue(const HloInstruction& inst, double value) {
  const HloInstruction* c = ConstantSource(&inst);
  if (c == nullptr) return false;
  auto v = UniformValue(c->literal());
  return v && *v == value && !std::isnan(*v);
}

bool IsUniformConstant(const HloInstruction& inst) {
  const HloInstruction* c = ConstantSource(&inst);
  return c != nullptr && UniformValue(c->literal()).has_value();
}

}  // namespace uir::hlo
