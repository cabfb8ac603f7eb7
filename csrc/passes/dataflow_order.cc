#include "passes/dataflow_order.h"

#include <unordered_set>
#include <vector>

namespace uir::passes {

void DataflowOrder::Renumber() {
  position_.clear();
  for (const hlo::HloInstruction* i : c_.MakeInstructionPostOrder())
    position_.emplace(i, static_cast<int64_t>(position_.size()));
}

int64_t DataflowOrder::Position(const hlo::HloInstruction* instruction) {
  if (!position_.count(instruction)) Renumber();
  return position_.at(instruction);
}

bool DataflowOrder::After(const hlo::HloInstruction* a, const hlo::HloInstruction* b) {
  if (a == b) return false;
  if (!position_.count(b)) Renumber();
  const int64_t floor = position_.at(b);
  std::vector<const hlo::HloInstruction*> work = {a};
  std::unordered_set<const hlo::HloInstruction*> seen = {a};
  while (!work.empty()) {
    const hlo::HloInstruction* i = work.back();
    work.pop_back();
    if (i == b) return true;
    const auto visit = [&](const hlo::HloInstruction* o) {
      auto it = position_.find(o);
      if ((it == position_.end() || it->second >= floor) && seen.insert(o).second)
        work.push_back(o);
    };
    for (const hlo::HloInstruction* o : i->operands()) visit(o);
    for (const hlo::HloInstruction* o : i->control_predecessors()) visit(o);
  }
  return false;
}

}  // namespace uir::passes
