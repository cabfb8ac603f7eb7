// library-defuser: fusions holding a dot or convolution, inlined.
#include "passes/fusion/library_defuser.h"

#include <unordered_set>

#include "passes/call_inliner.h"
#include "passes/fusion/fusion_analysis.h"

namespace uir::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool HoldsLibraryOp(const HloComputation& fused) {
  for (const HloInstruction* i : fused.instructions()) {
    if (i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution) return true;
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
