// HloModule: ownership, deep copy and structural equality.
#include "hlo/module.h"

#include <unordered_map>

#include "support/error.h"

namespace uir::hlo {
namespace {

using ComputationMap = std::unordered_map<const HloComputation*, HloComputation*>;

// Rewrites computation pointers inside an attribute value through `map`.
AttrValue RemapComputations(const AttrValue& value, const ComputationMap& map) {
  if (const auto* c = std::get_if<HloComputation*>(&value)) {
    auto it = map.find(*c);
    UIR_CHECK(it != map.end()) << "attribute names a computation outside the module";
    return it->second;
  }
  if (const auto* list = std::get_if<std::vector<HloComputation*>>(&value)) {
    std::vector<HloComputation*> out;
    for (HloComputation* c : *list) {
      auto it = map.find(c);
      UIR_CHECK(it != map.end()) << "attribute names a computation outside the module";
      out.push_back(it->second);
    }
    return out;
  }
  return value;
}

bool SameAttribute(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* ca = std::get_if<HloComputation*>(&a)) {
    return (*ca)->name() == std::get<HloComputation*>(b)->name();
  }
  if (const auto* la = std::get_if<std::vector<HloComputation*>>(&a)) {
    const auto& lb = std::get<std::vector<HloComputation*>>(b);
    if (la->size() != lb.size()) return false;
    for (size_t i = 0; i < la->size(); ++i) {
      if ((*la)[i]->name() != lb[i]->name()) return false;
    }
    return true;
  }
  return a == b;
}

bool SameInstruction(const HloInstruction& a, const HloInstruction& b,
                     const std::unordered_map<const HloInstruction*, size_t>& index_a,
                     const std::unordered_map<const HloInstruction*, size_t>& index_b) {
  if (a.opcode() != b.opcode() || a.name() != b.name() || !(a.shape() == b.shape())) return false;
  if (a.parameter_number() != b.parameter_number()) return false;
  if (a.has_literal() != b.has_literal()) return false;
  if (a.has_literal() && !(a.literal() == b.literal())) return false;
  if (a.operand_count() != b.operand_count()) return false;
  for (int64_t i = 0; i < a.operand_count(); ++i) {
    if (index_a.at(a.operand(i)) != index_b.at(b.operand(i))) return false;
  }
  if (a.control_predecessors().size() != b.control_predecessors().size()) return false;
  for (size_t i = 0; i < a.control_predecessors().size(); ++i) {
    if (index_a.at(a.control_predecessors()[i]) != index_b.at(b.control_predecessors()[i])) {
      return false;
    }
  }
  const auto& ea = a.attributes().entries();
  const auto& eb = b.attributes().entries();
  if (ea.size() != eb.size()) return false;
  for (size_t i = 0; i < ea.size(); ++i) {
    if (ea[i].first != eb[i].first || !SameAttribute(ea[i].second, eb[i].second)) return false;
  }
  return true;
}

bool SameComputation(const HloComputation& a, const HloComputation& b) {
  if (a.name() != b.name() || a.instruction_count() != b.instruction_count()) return false;
  if (a.execution_thread() != b.execution_thread()) return false;
  std::unordered_map<const HloInstruction*, size_t> index_a, index_b;
  for (size_t i = 0; i < a.instructions().size(); ++i) {
    index_a[a.instructions()[i].get()] = i;
    index_b[b.instructions()[i].get()] = i;
  }
  if ((a.root() == nullptr) != (b.root() == nullptr)) return false;
  if (a.root() && index_a.at(a.root()) != index_b.at(b.root())) return false;
  for (size_t i = 0; i < a.instructions().size(); ++i) {
    if (!SameInstruction(*a.instructions()[i], *b.instructions()[i], index_a, index_b)) {
      return false;
    }
  }
  return true;
}

}  // namespace

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  computation->parent_ = this;
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto out = std::make_unique<HloModule>(name_);
  out->config_ = config_;
  ComputationMap computation_map;
  for (const auto& c : computations_) {
    auto copy = std::make_unique<HloComputation>(c->name());
    copy->set_execution_thread(c->execution_thread());
    computation_map[c.get()] = copy.get();
    std::unordered_map<const HloInstruction*, HloInstruction*> inst_map;
    for (const auto& inst : c->instructions()) {
      auto ni = std::make_unique<HloInstruction>(inst->opcode(), inst->shape(), inst->name());
      ni->set_parameter_number(inst->parameter_number());
      if (inst->has_literal()) ni->set_literal(inst->literal());
      for (HloInstruction* op : inst->operands()) ni->AppendOperand(inst_map.at(op));
      for (const auto& [key, value] : inst->attributes().entries()) {
        ni->mutable_attributes().Set(key, RemapComputations(value, computation_map));
      }
      inst_map[inst.get()] = copy->AddInstruction(std::move(ni));
    }
    // Control edges may point forward in the order, so they are added last.
    for (const auto& inst : c->instructions()) {
      for (HloInstruction* pred : inst->control_predecessors()) {
        inst_map.at(pred)->AddControlDependencyTo(inst_map.at(inst.get()));
      }
    }
    if (c->root()) copy->set_root(inst_map.at(c->root()));
    HloComputation* added = out->AddComputation(std::move(copy));
    if (c.get() == entry_) out->entry_ = added;
  }
  return out;
}

bool HloModule::Equals(const HloModule& other) const {
  if (name_ != other.name_ || !(config_ == other.config_)) return false;
  if (computations_.size() != other.computations_.size()) return false;
  if ((entry_ == nullptr) != (other.entry_ == nullptr)) return false;
  if (entry_ && entry_->name() != other.entry_->name()) return false;
  for (size_t i = 0; i < computations_.size(); ++i) {
    if (!SameComputation(*computations_[i], *other.computations_[i])) return false;
  }
  return true;
}

}  // namespace uir::hlo
