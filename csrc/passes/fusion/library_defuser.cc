// library-defuser: fusions holding a library op, inlined.
#include "passes/fusion/library_defuser.h"

#include <unordered_set>

#include "passes/call_inliner.h"
#include "passes/fusion/fusion_analysis.h"

namespace uir::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Ops the CPU backend runs as library calls or loops of the runtime's own,
// on buffers, never inside a kernel.
bool IsLibraryOp(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kSort:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kFft:
    case HloOpcode::kCustomCall:
      return true;
    case HloOpcode::kReduce:
      return i.shape().IsTuple();  // variadic: argmax and its kin
    default:
      return false;
  }
}

bool HoldsLibraryOp(const HloComputation& fused) {
  for (const HloInstruction* i : fused.instructions()) {
    if (IsLibraryOp(*i)) return true;
    for (const HloComputation* c : i->called_computations()) {
      if (i->opcode() == HloOpcode::kFusion && HoldsLibraryOp(*c)) return true;
    }
  }
  return false;
}

}  // namespace

bool LibraryDefuser::Run(hlo::HloModule& module) {
  std::unordered_set<const HloComputation*> async_wrapped;
  for (const auto& c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kAsyncStart) {
        for (const HloComputation* w : i->called_computations()) async_wrapped.insert(w);
      }
    }
  }
  bool changed = false;
  // Callers first: a fusion nested in a fusion comes out with its parent
  // and is taken apart on the next round.
  for (bool again = true; again;) {
    again = false;
    for (HloComputation* c : module.MakeComputationPostOrder()) {
      if (async_wrapped.count(c)) continue;
      for (HloInstruction* f : c->MakeInstructionPostOrder()) {
        if (f->opcode() != HloOpcode::kFusion || f->is_removed()) continue;
        if (!f->control_predecessors().empty() || !f->control_successors().empty()) continue;
        const HloComputation* fused = fusion::FusedComputation(*f);
        if (!HoldsLibraryOp(*fused)) continue;
        c->ReplaceInstruction(f, InlineComputation(*fused, f->operands(), *c));
        changed = again = true;
      }
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
