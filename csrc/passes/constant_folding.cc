// constant-folding through the evaluator.
#include "passes/constant_folding.h"

#include "eval/evaluator.h"
#include "support/error.h"

namespace uir::passes {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool Foldable(const HloInstruction* i) {
  switch (i->opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kTuple:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
    case HloOpcode::kAfterAll:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kCustomCall:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kScan:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kOptimizationBarrier:
      return false;
    default:
      break;
  }
  if (i->HasSideEffect() || !i->shape().IsArray() || i->operand_count() == 0) return false;
  if (i->shape().element_count() > ConstantFolding::kMaxFoldedElements) return false;
  for (const bool d : i->shape().dynamic_dimensions()) {
    if (d) return false;
  }
  if (!i->control_predecessors().empty() || !i->control_successors().empty()) return false;
  for (const HloInstruction* o : i->operands()) {
    if (o->opcode() != HloOpcode::kConstant || !o->has_literal()) return false;
  }
  return true;
}

// Evaluates `i` alone: a scratch computation of it over parameters.
hlo::Literal Fold(const HloInstruction* i) {
  hlo::HloComputation scratch("fold");
  std::vector<HloInstruction*> params;
  std::vector<const hlo::Literal*> args;
  for (int64_t k = 0; k < i->operand_count(); ++k) {
    auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, i->operand(k)->shape(),
                                              "p" + std::to_string(k));
    p->set_parameter_number(k);
    params.push_back(scratch.AddInstruction(std::move(p)));
    args.push_back(&i->operand(k)->literal());
  }
  HloInstruction* clone = scratch.AddInstruction(i->CloneWithNewOperands(i->shape(), params));
  scratch.set_root(clone);
  return eval::EvaluateComputation(scratch, args);
}

}  // namespace

bool ConstantFolding::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->is_removed() || !Foldable(i)) continue;
      hlo::Literal value;
      try {
        value = Fold(i);
      } catch (const UserError&) {
        continue;  // left for the run to report, with its inputs
      }
      value.set_shape_layouts_from(i->shape());
      auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, i->shape(),
                                                       c->UniqueName("constant"));
      constant->set_literal(std::move(value));
      HloInstruction* added = c->AddInstruction(std::move(constant));
      c->ReplaceInstruction(i, added);
      changed = true;
    }
  }
  return changed;
}

}  // namespace uir::passes
