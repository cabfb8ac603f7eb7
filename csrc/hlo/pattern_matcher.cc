// Pattern matcher combinators.
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

Pattern Pattern::Bind(HloInstruction** out) const {
  if (out == nullptr) return *this;
  Predicate p = predicate_;
  return Pattern([p, out](HloInstruction* i) {
    if (!p(i)) return false;
    *out = i;
    return true;
  });
}

Pattern Pattern::WithOneUser() const {
  return Where([](HloInstruction* i) { return i->user_count() == 1; });
}

Pattern Pattern::WithElementType(PrimitiveType type) const {
  return Where([type](HloInstruction* i) {
    return i->shape().IsArray() && i->shape().element_type() == type;
  });
}

Pattern Pattern::WithShapeCompatibleTo(const Shape* shape) const {
  return Where([shape](HloInstruction* i) { return i->shape().Compatible(*shape); });
}

Pattern Pattern::Where(Predicate extra) const {
  Predicate p = predicate_;
  return Pattern([p, extra](HloInstruction* i) { return p(i) && extra(i); });
}

namespace m {

Pattern Op(HloInstruction** out) {
  return Pattern([](HloInstruction*) { return true; }).Bind(out);
}

Pattern Opcode(HloOpcode opcode, std::vector<Pattern> operands, HloInstruction** out) {
  return Pattern([opcode, operands = std::move(operands)](HloInstruction* i) {
           if (i->opcode() != opcode) return false;
           if (operands.empty()) return true;
           if (i->operand_count() != static_cast<int64_t>(operands.size())) return false;
           for (size_t k = 0; k < operands.size(); ++k) {
             if (!operands[k].Matches(i->operand(static_cast<int64_t>(k)))) return false;
           }
           return true;
         })
      .Bind(out);
}

Pattern AnyOrder(HloOpcode opcode, Pattern a, Pattern b, HloInstruction** out) {
  return Pattern([opcode, a = std::move(a), b = std::move(b)](HloInstruction* i) {
           if (i->opcode() != opcode || i->operand_count() != 2) return false;
           return (a.Matches(i->operand(0)) && b.Matches(i->operand(1))) ||
                  (a.Matches(i->operand(1)) && b.Matches(i->operand(0)));
         })
      .Bind(out);
}

Pattern Constant(HloInstruction** out) {
  return Pattern([](HloInstruction* i) { return i->opcode() == HloOpcode::kConstant; }).Bind(out);
}

Pattern ConstantEffectiveScalar(double value, HloInstruction** out) {
  return Pattern([value](HloInstruction* i) { return IsConstantWithValue(*i, value); }).Bind(out);
}

Pattern UniformConstant(HloInstruction** out) {
  return Pattern([](HloInstruction* i) {
           const HloInstruction* c = ConstantSource(i);
           return c != nullptr && UniformValue(c->literal()).has_value();
         })
      .Bind(out);
}

}  // namespace m
}  // namespace uir::hlo
