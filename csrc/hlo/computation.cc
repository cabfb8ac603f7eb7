// HloComputation: ownership, editing, lookup and post order.
#include "hlo/computation.h"

#include <sstream>

#include "hlo/module.h"
#include "support/error.h"

namespace uir::hlo {

void HloComputation::Register(HloInstruction* inst) {
  inst->parent_ = this;
  if (parent_ != nullptr) {
    inst->unique_id_ = parent_->NextUniqueId();
    parent_->RegisterInstructionName(inst->name());
  } else {
    inst->unique_id_ = next_local_id_++;
  }
  by_name_.try_emplace(inst->name_, inst);
}

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> instruction) {
  HloInstruction* raw = instruction.get();
  UIR_CHECK(raw->parent_ == nullptr && !raw->removed_)
      << "instruction %" << raw->name() << " already belongs to a computation";
  if (raw->opcode() == HloOpcode::kParameter) {
    int64_t n = raw->parameter_number();
    UIR_CHECK(n >= 0) << "parameter " << raw->name() << " has no number";
    if (n >= num_parameters()) parameters_.resize(n + 1, nullptr);
    parameters_[n] = raw;
  }
  // Compact when more than half the slots are holes, so the list stays O(live).
  if (instructions_.size() >= 64 && static_cast<size_t>(live_count_) * 2 < instructions_.size())
    Compact();
  raw->index_in_parent_ = static_cast<int64_t>(instructions_.size());
  instructions_.push_back(std::move(instruction));
  ++live_count_;
  Register(raw);
  return raw;
}

std::string HloComputation::UniqueName(const std::string& base) {
  if (parent_ != nullptr) return parent_->UniqueInstructionName(base);
  // Detached: unique among the instructions the computation holds now.
  std::string stem = base.empty() ? "instruction" : base;
  std::string name = stem;
  for (int64_t n = 1; by_name_.count(name); ++n) name = stem + "." + std::to_string(n);
  return name;
}

void HloComputation::Rename(HloInstruction* inst, std::string name) {
  auto it = by_name_.find(inst->name_);
  if (it != by_name_.end() && it->second == inst) by_name_.erase(it);
  inst->name_ = std::move(name);
  by_name_.try_emplace(inst->name_, inst);
  if (parent_ != nullptr) parent_->RegisterInstructionName(inst->name_);
}

void HloComputation::RemoveInstruction(HloInstruction* inst) {
  UIR_CHECK(inst != nullptr && inst->parent_ == this && !inst->removed_)
      << "removing an instruction that is not in computation " << name_;
  UIR_CHECK(inst->users().empty())
      << "cannot remove %" << inst->name() << ": it still has " << inst->user_count() << " users";
  UIR_CHECK(inst != root_) << "cannot remove %" << inst->name() << ": it is the root of " << name_;
  UIR_CHECK(inst->opcode() != HloOpcode::kParameter) << "cannot remove parameter %" << inst->name();
  inst->DetachOperands();
  Retire(inst);
}

void HloComputation::Retire(HloInstruction* inst) {
  inst->DropControlDependenciesKeepingOrder();
  auto it = by_name_.find(inst->name());
  if (it != by_name_.end() && it->second == inst) by_name_.erase(it);
  inst->removed_ = true;
  removed_.push_back(std::move(instructions_[inst->index_in_parent_]));
  inst->index_in_parent_ = -1;
  --live_count_;
}

void HloComputation::RemoveParameter(int64_t number) {
  UIR_CHECK(number >= 0 && number < num_parameters() && parameters_[number] != nullptr)
      << "computation " << name_ << " has no parameter " << number;
  HloInstruction* param = parameters_[number];
  UIR_CHECK(param->users().empty() && param != root_)
      << "cannot remove parameter %" << param->name() << ": it is still used";
  Retire(param);
  parameters_.erase(parameters_.begin() + number);
  for (int64_t k = number; k < num_parameters(); ++k) {
    if (parameters_[k] != nullptr) parameters_[k]->set_parameter_number(k);
  }
}

void HloComputation::RemoveInstructionAndUnusedOperands(HloInstruction* inst) {
  std::vector<HloInstruction*> worklist = {inst};
  while (!worklist.empty()) {
    HloInstruction* i = worklist.back();
    worklist.pop_back();
    if (i->removed_ || !i->users().empty() || i == root_ || i->opcode() == HloOpcode::kParameter) {
      continue;
    }
    std::vector<HloInstruction*> operands = i->operands();
    RemoveInstruction(i);
    for (HloInstruction* o : operands) {
      if (o->users().empty()) worklist.push_back(o);
    }
  }
}

void HloComputation::ReplaceInstruction(HloInstruction* old_inst, HloInstruction* new_inst) {
  UIR_CHECK(old_inst->parent_ == this && new_inst->parent_ == this)
      << "ReplaceInstruction across computations (%" << old_inst->name() << ", %"
      << new_inst->name() << ")";
  if (old_inst == new_inst) return;
  old_inst->ReplaceAllUsesWith(new_inst);
  if (!new_inst->attributes().Has(AttrKey::kMetadata)) {
    if (const AttrValue* md = old_inst->attributes().Find(AttrKey::kMetadata)) {
      new_inst->mutable_attributes().Set(AttrKey::kMetadata, *md);
    }
  }
  RemoveInstructionAndUnusedOperands(old_inst);
}

void HloComputation::Cleanup() {
  // The schedule may still point at removed instructions.
  if (parent_ != nullptr && parent_->has_schedule()) parent_->mutable_schedule().Update(*parent_);
  FreeRemoved();
}

void HloComputation::FreeRemoved() {
  removed_.clear();
  if (static_cast<size_t>(live_count_) != instructions_.size()) Compact();
}

void HloComputation::Compact() {
  size_t out = 0;
  for (auto& slot : instructions_) {
    if (slot == nullptr) continue;
    slot->index_in_parent_ = static_cast<int64_t>(out);
    instructions_[out++] = std::move(slot);
  }
  instructions_.resize(out);
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  std::vector<HloInstruction*> order;
  order.reserve(live_count_);
  // Visit state by unique id would need a map; the slot index is dense.
  // 0: unvisited, 1: on the stack, 2: done.
  std::vector<uint8_t> state(instructions_.size(), 0);
  auto state_of = [&](const HloInstruction* i) -> uint8_t& {
    return state[static_cast<size_t>(i->index_in_parent_)];
  };
  // Iterative DFS so deep graphs cannot overflow the C++ stack.
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (const auto& start : instructions_) {
    if (start == nullptr || state_of(start.get()) != 0) continue;
    stack.emplace_back(start.get(), 0);
    state_of(start.get()) = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t num_operands = node->operands().size();
      const size_t num_deps = num_operands + node->control_predecessors().size();
      if (next < num_deps) {
        HloInstruction* dep = next < num_operands
                                  ? node->operand(static_cast<int64_t>(next))
                                  : node->control_predecessors()[next - num_operands];
        ++next;
        // Operands outside this computation (a malformed module) are left to
        // the verifier.
        if (dep->parent_ == this && !dep->removed_ && state_of(dep) == 0) {
          state_of(dep) = 1;
          stack.emplace_back(dep, 0);
        }
        continue;
      }
      state_of(node) = 2;
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

HloInstruction* HloComputation::FindInstruction(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
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
