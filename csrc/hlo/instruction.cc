// HloInstruction: operand/user bookkeeping and called computations.
#include "hlo/instruction.h"

#include <algorithm>

#include "hlo/computation.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

// Past this many users an instruction keeps an index of them.
constexpr size_t kUserIndexThreshold = 16;

void AddUnique(std::vector<HloInstruction*>& list, HloInstruction* x) {
  if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
}

void EraseValue(std::vector<HloInstruction*>& list, HloInstruction* x) {
  list.erase(std::remove(list.begin(), list.end(), x), list.end());
}

}  // namespace

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape, std::string name)
    : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}

void HloInstruction::set_name(std::string name) {
  if (parent_ != nullptr) {
    parent_->Rename(this, std::move(name));
  } else {
    name_ = std::move(name);
  }
}

bool HloInstruction::IsUserOf(const HloInstruction* operand) const {
  if (operand->user_index_) return operand->user_index_->count(this) > 0;
  return std::find(operand->users_.begin(), operand->users_.end(), this) != operand->users_.end();
}

void HloInstruction::AddUser(HloInstruction* user) {
  if (user_index_) {
    if (user_index_->emplace(user, users_.size()).second) users_.push_back(user);
    return;
  }
  if (std::find(users_.begin(), users_.end(), user) != users_.end()) return;
  users_.push_back(user);
  if (users_.size() > kUserIndexThreshold) {
    user_index_ = std::make_unique<std::unordered_map<const HloInstruction*, size_t>>();
    for (size_t i = 0; i < users_.size(); ++i) user_index_->emplace(users_[i], i);
  }
}

void HloInstruction::RemoveUser(HloInstruction* user) {
  if (user_index_) {
    // Swap with the last user: O(1), and still deterministic.
    auto it = user_index_->find(user);
    if (it == user_index_->end()) return;
    const size_t pos = it->second;
    user_index_->erase(it);
    if (pos + 1 != users_.size()) {
      users_[pos] = users_.back();
      (*user_index_)[users_[pos]] = pos;
    }
    users_.pop_back();
    return;
  }
  EraseValue(users_, user);
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  UIR_CHECK(operand != nullptr) << "null operand for " << name_;
  operands_.push_back(operand);
  operand->AddUser(this);
}

void HloInstruction::RemoveOperand(int64_t i) {
  UIR_CHECK(i >= 0 && i < operand_count()) << "operand index " << i << " of " << name_;
  HloInstruction* old = operands_[i];
  operands_.erase(operands_.begin() + i);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) old->RemoveUser(this);
}

void HloInstruction::ReplaceOperand(int64_t i, HloInstruction* operand) {
  UIR_CHECK(i >= 0 && i < operand_count()) << "operand index " << i << " of " << name_;
  UIR_CHECK(operand != nullptr) << "null operand for " << name_;
  HloInstruction* old = operands_[i];
  if (old == operand) return;
  operands_[i] = operand;
  operand->AddUser(this);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) old->RemoveUser(this);
}

void HloInstruction::ReplaceUsesOfOperand(HloInstruction* old_operand,
                                          HloInstruction* new_operand) {
  UIR_CHECK(new_operand != nullptr) << "null operand for " << name_;
  if (old_operand == new_operand) return;
  bool found = false;
  for (HloInstruction*& o : operands_) {
    if (o == old_operand) {
      o = new_operand;
      found = true;
    }
  }
  if (!found) return;
  old_operand->RemoveUser(this);
  new_operand->AddUser(this);
}

void HloInstruction::ReplaceAllUsesWith(HloInstruction* replacement) {
  UIR_CHECK(replacement != nullptr) << "replacing %" << name_ << " with null";
  UIR_CHECK(shape_.Compatible(replacement->shape()))
      << "replacing %" << name_ << " (" << shape_.ToString() << ") with %" << replacement->name()
      << " (" << replacement->shape().ToString() << "): the shapes differ";
  ReplaceAllUsesWithDifferentShape(replacement);
}

void HloInstruction::ReplaceAllUsesWithDifferentShape(HloInstruction* replacement) {
  UIR_CHECK(replacement != nullptr) << "replacing %" << name_ << " with null";
  if (replacement == this) return;
  // Take the list first: the loop empties it.
  std::vector<HloInstruction*> users = std::move(users_);
  users_.clear();
  user_index_.reset();
  for (HloInstruction* user : users) {
    // A user that is the replacement itself keeps its operand (x -> f(x)).
    if (user == replacement) {
      AddUser(user);
      continue;
    }
    for (HloInstruction*& o : user->operands_) {
      if (o == this) o = replacement;
    }
    replacement->AddUser(user);
  }
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(replacement);
}

void HloInstruction::DetachOperands() {
  for (HloInstruction* o : operands_) o->RemoveUser(this);
  operands_.clear();
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  AddUnique(control_succs_, successor);
  AddUnique(successor->control_preds_, this);
}

void HloInstruction::RemoveControlDependencyTo(HloInstruction* successor) {
  EraseValue(control_succs_, successor);
  EraseValue(successor->control_preds_, this);
}

void HloInstruction::DropControlDependenciesKeepingOrder() {
  for (HloInstruction* pred : control_preds_) {
    EraseValue(pred->control_succs_, this);
    for (HloInstruction* succ : control_succs_) pred->AddControlDependencyTo(succ);
  }
  for (HloInstruction* succ : control_succs_) EraseValue(succ->control_preds_, this);
  control_preds_.clear();
  control_succs_.clear();
}

std::unique_ptr<HloInstruction> HloInstruction::CloneWithNewOperands(
    const Shape& shape, const std::vector<HloInstruction*>& operands,
    const std::string& suffix) const {
  auto out = std::make_unique<HloInstruction>(opcode_, shape,
                                              suffix.empty() ? name_ : name_ + "." + suffix);
  out->parameter_number_ = parameter_number_;
  if (literal_) out->literal_ = std::make_unique<Literal>(*literal_);
  out->attrs_ = attrs_;
  for (HloInstruction* o : operands) out->AppendOperand(o);
  return out;
}

bool HloInstruction::HasSideEffect() const {
  if (HasSideEffectOpcode(opcode_)) return true;
  if (opcode_ == HloOpcode::kCustomCall &&
      attrs_.GetOr<bool>(AttrKey::kCustomCallHasSideEffect).value_or(false)) {
    return true;
  }
  for (const HloComputation* c : called_computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->HasSideEffect()) return true;
    }
  }
  return false;
}

std::vector<HloComputation*> HloInstruction::called_computations() const {
  std::vector<HloComputation*> out;
  for (const auto& [key, value] : attrs_.entries()) {
    if (const auto* c = std::get_if<HloComputation*>(&value)) {
      out.push_back(*c);
    } else if (const auto* list = std::get_if<std::vector<HloComputation*>>(&value)) {
      out.insert(out.end(), list->begin(), list->end());
    }
  }
  return out;
}

const HloInstruction* HloInstruction::async_chain_start() const {
  const HloInstruction* i = this;
  while ((i->opcode_ == HloOpcode::kAsyncUpdate || i->opcode_ == HloOpcode::kAsyncDone) &&
         !i->operands_.empty()) {
    i = i->operands_[0];
  }
  return i->opcode_ == HloOpcode::kAsyncStart ? i : nullptr;
}

HloComputation* HloInstruction::async_wrapped_computation() const {
  if (!IsAsyncOpcode(opcode_)) return nullptr;
  if (auto c = attrs_.GetOr<HloComputation*>(AttrKey::kCalls)) return *c;
  const HloInstruction* start = async_chain_start();
  if (start == nullptr || start == this) return nullptr;
  auto c = start->attrs_.GetOr<HloComputation*>(AttrKey::kCalls);
  return c ? *c : nullptr;
}

HloInstruction* HloInstruction::async_wrapped_instruction() const {
  HloComputation* c = async_wrapped_computation();
  return c ? c->root() : nullptr;
}

}  // namespace uir::hlo
