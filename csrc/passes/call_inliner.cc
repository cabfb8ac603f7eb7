// call-inliner: clone the callee in place of each call.
#include "passes/call_inliner.h"

#include <unordered_map>
#include <unordered_set>

namespace uir::passes {

hlo::HloInstruction* InlineComputation(const hlo::HloComputation& callee,
                                       const std::vector<hlo::HloInstruction*>& arguments,
                                       hlo::HloComputation& caller) {
  std::unordered_map<const hlo::HloInstruction*, hlo::HloInstruction*> map;
  for (int64_t k = 0; k < callee.num_parameters(); ++k) map[callee.parameter(k)] = arguments[k];
  const std::vector<hlo::HloInstruction*> order = callee.MakeInstructionPostOrder();
  for (hlo::HloInstruction* i : order) {
    if (i->opcode() == hlo::HloOpcode::kParameter) continue;
    std::vector<hlo::HloInstruction*> operands;
    for (hlo::HloInstruction* o : i->operands()) operands.push_back(map.at(o));
    auto clone = i->CloneWithNewOperands(i->shape(), operands);
    clone->set_name(caller.UniqueName(i->name()));
    map[i] = caller.AddInstruction(std::move(clone));
  }
  for (hlo::HloInstruction* i : order) {
    for (hlo::HloInstruction* p : i->control_predecessors()) {
      if (p->opcode() != hlo::HloOpcode::kParameter && i->opcode() != hlo::HloOpcode::kParameter)
        map.at(p)->AddControlDependencyTo(map.at(i));
    }
  }
  return map.at(callee.root());
}

bool CallInliner::Run(hlo::HloModule& module) {
  bool changed = false;
  // Async work wraps its op in a computation of its own: that stays as is.
  std::unordered_set<const hlo::HloComputation*> async_wrapped;
  for (const auto& c : module.computations()) {
    for (const hlo::HloInstruction* i : c->instructions()) {
      if (i->opcode() == hlo::HloOpcode::kAsyncStart) {
        for (const hlo::HloComputation* w : i->called_computations()) async_wrapped.insert(w);
      }
    }
  }
  // Inlining copies the callee's own calls into the caller: repeat until
  // none is left.
  for (bool again = true; again;) {
    again = false;
    for (hlo::HloComputation* c : module.MakeComputationPostOrder()) {
      if (async_wrapped.count(c)) continue;
      for (hlo::HloInstruction* call : c->MakeInstructionPostOrder()) {
        if (call->opcode() != hlo::HloOpcode::kCall || call->is_removed()) continue;
        if (!call->control_predecessors().empty() || !call->control_successors().empty()) continue;
        const auto* callee = call->attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kToApply);
        hlo::HloInstruction* root = InlineComputation(*callee, call->operands(), *c);
        c->ReplaceInstruction(call, root);
        changed = again = true;
      }
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
