// algsimp driver: post-order walk, rule families by opcode.
#include "passes/algsimp/algsimp.h"

#include "hlo/reduction_kind.h"
#include "support/error.h"

namespace uir::passes {
namespace algsimp {

hlo::HloInstruction* SplatLike(const hlo::HloInstruction* inst, double value,
                               hlo::ComputationBuilder& b) {
  const hlo::Shape& s = inst->shape();
  hlo::HloInstruction* scalar = b.Constant(hlo::ScalarLiteral(s.element_type(), value));
  if (s.rank() == 0) return scalar;
  hlo::HloInstruction* out = b.Broadcast(scalar, s.dimensions(), {});
  out->mutable_shape() = s;
  return out;
}

std::optional<hlo::HloOpcode> ReducerOpcode(const hlo::HloComputation& reducer) {
  // xor is left out: the rules that use this repeat or drop the reducer's
  // operands (max(x, x) = x), which xor does not allow.
  const std::optional<hlo::ReductionKind> kind = hlo::ReducerKind(reducer);
  if (!kind || *kind == hlo::ReductionKind::kXor) return std::nullopt;
  return hlo::ReductionOpcode(*kind);
}

}  // namespace algsimp

namespace {

const std::vector<algsimp::Rule>& RulesFor(hlo::HloOpcode op) {
  static const std::vector<algsimp::Rule> kNone;
  switch (op) {
    case hlo::HloOpcode::kAdd:
    case hlo::HloOpcode::kSubtract:
    case hlo::HloOpcode::kMultiply:
    case hlo::HloOpcode::kDivide:
    case hlo::HloOpcode::kNegate:
    case hlo::HloOpcode::kNot:
    case hlo::HloOpcode::kSelect:
    case hlo::HloOpcode::kAnd:
    case hlo::HloOpcode::kOr:
    case hlo::HloOpcode::kMaximum:
    case hlo::HloOpcode::kMinimum:
    case hlo::HloOpcode::kPower:
    case hlo::HloOpcode::kReducePrecision:
      return algsimp::ArithmeticRules();
    case hlo::HloOpcode::kReshape:
    case hlo::HloOpcode::kTranspose:
    case hlo::HloOpcode::kBroadcast:
    case hlo::HloOpcode::kSlice:
    case hlo::HloOpcode::kConcatenate:
    case hlo::HloOpcode::kPad:
    case hlo::HloOpcode::kConvert:
    case hlo::HloOpcode::kCopy:
    case hlo::HloOpcode::kReverse:
    case hlo::HloOpcode::kBitcast:
    case hlo::HloOpcode::kBitcastConvert:
    case hlo::HloOpcode::kDynamicSlice:
      return algsimp::ShapeRules();
    case hlo::HloOpcode::kDot:
    case hlo::HloOpcode::kConvolution:
    case hlo::HloOpcode::kReduce:
    case hlo::HloOpcode::kReduceWindow:
      return algsimp::DotReduceRules();
    default:
      return kNone;
  }
}

bool HasDynamicDimension(const hlo::Shape& s) {
  if (!s.IsArray()) return false;
  for (bool d : s.dynamic_dimensions()) {
    if (d) return true;
  }
  return false;
}

// Rules reason about static sizes; ops on dynamic sizes are left alone.
bool Static(const hlo::HloInstruction* inst) {
  if (HasDynamicDimension(inst->shape())) return false;
  for (const hlo::HloInstruction* o : inst->operands()) {
    if (HasDynamicDimension(o->shape())) return false;
  }
  return true;
}

bool RunOnComputation(hlo::HloComputation& c) {
  bool changed = false;
  hlo::ComputationBuilder b(&c);
  for (hlo::HloInstruction* inst : c.MakeInstructionPostOrder()) {
    if (inst->is_removed() || inst->HasSideEffect() || !Static(inst)) continue;
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) continue;
    for (algsimp::Rule rule : RulesFor(inst->opcode())) {
      hlo::HloInstruction* r = rule(inst, b);
      if (r == nullptr || r == inst) continue;
      UIR_CHECK(r->shape() == inst->shape())
          << "algsimp rule replaced %" << inst->name() << " (" << inst->shape().ToString()
          << ") with %" << r->name() << " (" << r->shape().ToString() << ")";
      c.ReplaceInstruction(inst, r);
      changed = true;
      break;
    }
  }
  return changed;
}

}  // namespace

bool AlgebraicSimplifier::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* c : module.MakeComputationPostOrder()) changed |= RunOnComputation(*c);
  return changed;
}

}  // namespace uir::passes
