// dce: dead instructions (worklist from each dead one) and dead computations.
#include "passes/dce.h"

namespace uir::passes {
namespace {

bool IsDead(const hlo::HloInstruction* i) {
  const hlo::HloComputation* c = i->parent();
  return !i->is_removed() && i->users().empty() && i != c->root() &&
         i->opcode() != hlo::HloOpcode::kParameter && !i->HasSideEffect();
}

}  // namespace

bool RemoveDeadInstructions(hlo::HloComputation& computation) {
  std::vector<hlo::HloInstruction*> worklist;
  for (hlo::HloInstruction* i : computation.instructions()) {
    if (IsDead(i)) worklist.push_back(i);
  }
  bool changed = false;
  while (!worklist.empty()) {
    hlo::HloInstruction* i = worklist.back();
    worklist.pop_back();
    if (!IsDead(i)) continue;
    std::vector<hlo::HloInstruction*> operands = i->operands();
    computation.RemoveInstruction(i);
    changed = true;
    for (hlo::HloInstruction* o : operands) {
      if (IsDead(o)) worklist.push_back(o);
    }
  }
  return changed;
}

bool Dce::Run(hlo::HloModule& module) {
  bool changed = false;
  // Callers first: removing a call can make its callee unreachable.
  std::vector<hlo::HloComputation*> order = module.MakeComputationPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    changed |= RemoveDeadInstructions(**it);
  }
  changed |= module.RemoveUnreachableComputations() > 0;
  return changed;
}

}  // namespace uir::passes
