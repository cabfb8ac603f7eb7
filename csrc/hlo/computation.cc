// HloComputation: ownership, lookup and post order.
#include "hlo/computation.h"

#include <sstream>
#include <unordered_set>

#include "support/error.h"

namespace uir::hlo {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* raw = instruction.get();
  raw->parent_ = this;
  if (raw->opcode() == HloOpcode::kParameter) {
    int64_t n = raw->parameter_number();
    UIR_CHECK(n >= 0) << "parameter " << raw->name() << " has no number";
    if (n >= num_parameters()) parameters_.resize(n + 1, nullptr);
    parameters_[n] = raw;
  }
  instructions_.push_back(std::move(instruction));
  return raw;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  std::unordered_set<const HloInstruction*> done;
  std::unordered_set<const HloInstruction*> on_stack;
  // Iterative DFS so deep graphs cannot overflow the C++ stack.
  for (const auto& start : instructions_) {
    if (done.count(start.get())) continue;
    std::vector<std::pair<HloInstruction*, size_t>> stack = {{start.get(), 0}};
    on_stack.insert(start.get());
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t num_deps = node->operands().size() + node->control_predecessors().size();
      if (next < num_deps) {
        HloInstruction* dep = next < node->operands().size()
                                  ? node->operand(static_cast<int64_t>(next))
                                  : node->control_predecessors()[next - node->operands().size()];
        ++next;
        if (!done.count(dep) && !on_stack.count(dep)) {
          on_stack.insert(dep);
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      on_stack.erase(node);
      done.insert(node);
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

HloInstruction* HloComputation::FindInstruction(std::string_view name) const {
  for (const auto& inst : instructions_) {
    if (inst->name() == name) return inst.get();
  }
  return nullptr;
}

std::string HloComputation::SignatureString(bool print_layout) const {
  std::ostringstream os;
  os << "(";
  for (int64_t i = 0; i < num_parameters(); ++i) {
    const HloInstruction* p = parameters_[i];
    os << (i ? ", " : "") << (p ? p->name() : "?") << ": "
       << (p ? p->shape().ToString(print_layout) : "?");
  }
  os << ") -> " << (root_ ? root_->shape().ToString(print_layout) : "?");
  return os.str();
}

}  // namespace uir::hlo
