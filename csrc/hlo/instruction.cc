// HloInstruction: operand/user bookkeeping and called computations.
#include "hlo/instruction.h"

#include <algorithm>

#include "hlo/computation.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

void AddUnique(std::vector<HloInstruction*>& list, HloInstruction* x) {
  if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
}

}  // namespace

HloInstruction::HloInstruction(HloOpcode opcode, Shape shape, std::string name)
    : opcode_(opcode), shape_(std::move(shape)), name_(std::move(name)) {}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  UIR_CHECK(operand != nullptr) << "null operand for " << name_;
  operands_.push_back(operand);
  AddUnique(operand->users_, this);
}

void HloInstruction::ReplaceOperand(int64_t i, HloInstruction* operand) {
  UIR_CHECK(i >= 0 && i < operand_count()) << "operand index " << i << " of " << name_;
  HloInstruction* old = operands_[i];
  operands_[i] = operand;
  AddUnique(operand->users_, this);
  if (std::find(operands_.begin(), operands_.end(), old) == operands_.end()) {
    auto& users = old->users_;
    users.erase(std::remove(users.begin(), users.end(), this), users.end());
  }
}

void HloInstruction::AddControlDependencyTo(HloInstruction* successor) {
  AddUnique(control_succs_, successor);
  AddUnique(successor->control_preds_, this);
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
