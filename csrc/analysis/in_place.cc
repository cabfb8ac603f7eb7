#include "analysis/in_place.h"

#include <algorithm>

#include "hlo/computation.h"

namespace uir::analysis {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

const HloInstruction* ThroughBitcasts(const HloInstruction* x) {
  while (x->opcode() == HloOpcode::kBitcast) x = x->operand(0);
  return x;
}

}  // namespace

std::vector<InPlacePair> InPlacePairs(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
      return {{{}, 0, {}}};
    case HloOpcode::kScatter: {
      const int64_t n = (i.operand_count() - 1) / 2;
      std::vector<InPlacePair> out;
      for (int64_t k = 0; k < n; ++k) out.push_back({n == 1 ? ShapeIndex{} : ShapeIndex{k}, k, {}});
      return out;
    }
    case HloOpcode::kFusion: {
      const HloComputation* fused = i.attributes().Get<HloComputation*>(AttrKey::kCalls);
      const HloInstruction* root = fused->root();
      std::vector<InPlacePair> out;
      auto add = [&](const HloInstruction* r, ShapeIndex at) {
        for (const InPlacePair& p : InPlacePairs(*r)) {
          const HloInstruction* param = ThroughBitcasts(r->operand(p.operand));
          if (param->opcode() != HloOpcode::kParameter || !p.operand_index.empty()) continue;
          ShapeIndex where = at;
          where.insert(where.end(), p.output_index.begin(), p.output_index.end());
          out.push_back({where, param->parameter_number(), {}});
        }
      };
      if (root->opcode() == HloOpcode::kTuple) {
        for (int64_t k = 0; k < root->operand_count(); ++k) add(root->operand(k), {k});
      } else {
        add(root, {});
      }
      return out;
    }
    case HloOpcode::kCustomCall: {
      std::vector<InPlacePair> out;
      if (auto a = i.attributes().GetOr<std::vector<hlo::OutputOperandAlias>>(
              AttrKey::kOutputToOperandAliasing)) {
        for (const hlo::OutputOperandAlias& x : *a)
          out.push_back({x.output_index, x.operand, x.operand_index});
      }
      return out;
    }
    default:
      return {};
  }
}

std::vector<int64_t> InPlaceOperands(const HloInstruction& i) {
  std::vector<int64_t> out;
  for (const InPlacePair& p : InPlacePairs(i)) {
    if (!p.operand_index.empty()) continue;
    out.push_back(p.operand);
  }
  return out;
}

namespace {

// Every path from `param` to the fused root runs through elementwise ops of
// the root's shape (bitcasts excluded: they re-index).
bool ElementwiseToRoot(const HloInstruction* param, const hlo::Shape& out) {
  std::vector<const HloInstruction*> work = {param};
  std::vector<const HloInstruction*> seen;
  while (!work.empty()) {
    const HloInstruction* x = work.back();
    work.pop_back();
    for (const HloInstruction* u : x->users()) {
      if (std::find(seen.begin(), seen.end(), u) != seen.end()) continue;
      seen.push_back(u);
      if (!hlo::IsElementwise(u->opcode()) || u->shape().dimensions() != out.dimensions()) {
        return false;
      }
      work.push_back(u);
    }
  }
  return true;
}

}  // namespace

bool CanShareOperandBuffer(const HloInstruction& user, int64_t operand) {
  const hlo::Shape& out = user.shape();
  const hlo::Shape& in = user.operand(operand)->shape();
  if (!out.IsArray() || !in.IsArray()) return false;
  if (in.dimensions() != out.dimensions() || ByteSize(in) != ByteSize(out)) return false;
  if (in.has_layout() != out.has_layout()) return false;
  if (in.has_layout() && in.layout().minor_to_major != out.layout().minor_to_major) return false;
  if (hlo::IsElementwise(user.opcode())) return true;
  if (user.opcode() != HloOpcode::kFusion) return false;
  const HloComputation* fused = user.attributes().Get<HloComputation*>(AttrKey::kCalls);
  if (fused->root()->opcode() == HloOpcode::kTuple) return false;
  if (!InPlacePairs(user).empty()) return false;
  // A fused dot or convolution runs as a library call that writes the
  // result buffer before the epilogue reads the other operands: none of
  // them may share it.
  for (const HloInstruction* i : fused->instructions()) {
    if (i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution) return false;
  }
  for (const HloInstruction* p : fused->parameters()) {
    if (p->parameter_number() == operand) return ElementwiseToRoot(p, out);
  }
  return false;
}

}  // namespace uir::analysis
