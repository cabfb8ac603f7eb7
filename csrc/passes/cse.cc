// cse: a hash set of instructions seen, probed in post order.
#include "passes/cse.h"

#include <unordered_set>

namespace uir::passes {
namespace {

struct Key {
  hlo::HloInstruction* inst;
  bool operator==(const Key& other) const {
    return inst->Identical(*other.inst, /*compare_computations=*/true,
                           hlo::IsCommutative(inst->opcode()));
  }
};

struct KeyHash {
  size_t operator()(const Key& k) const {
    return k.inst->Hash(hlo::IsCommutative(k.inst->opcode()));
  }
};

bool Mergeable(const hlo::HloInstruction* i) {
  return i->opcode() != hlo::HloOpcode::kParameter && i->control_predecessors().empty() &&
         i->control_successors().empty() && !i->HasSideEffect();
}

}  // namespace

bool CseComputation(hlo::HloComputation& c) {
  bool changed = false;
  const std::vector<hlo::HloInstruction*> order = c.MakeInstructionPostOrder();
  std::unordered_set<Key, KeyHash> seen;
  seen.reserve(order.size());
  for (hlo::HloInstruction* i : order) {
    if (i->is_removed() || !Mergeable(i)) continue;
    auto [it, inserted] = seen.insert(Key{i});
    if (inserted) continue;
    hlo::HloInstruction* keep = it->inst;
    i->ReplaceAllUsesWith(keep);
    c.RemoveInstructionAndUnusedOperands(i);
    changed = true;
  }
  return changed;
}

bool Cse::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* c : module.MakeComputationPostOrder()) changed |= CseComputation(*c);
  return changed;
}

}  // namespace uir::passes
