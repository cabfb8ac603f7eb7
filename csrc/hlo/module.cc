// HloModule: ownership, deep copy and structural equality.
#include "hlo/module.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "support/error.h"

namespace uir::hlo {
namespace {

using ComputationMap = absl::flat_hash_map<const HloComputation*, HloComputation*>;

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
  const std::vector<HloInstruction*> order_a = a.MakeInstructionPostOrder();
  const std::vector<HloInstruction*> order_b = b.MakeInstructionPostOrder();
  std::unordered_map<const HloInstruction*, size_t> index_a, index_b;
  for (size_t i = 0; i < order_a.size(); ++i) {
    index_a[order_a[i]] = i;
    index_b[order_b[i]] = i;
  }
  if ((a.root() == nullptr) != (b.root() == nullptr)) return false;
  if (a.root() && index_a.at(a.root()) != index_b.at(b.root())) return false;
  for (size_t i = 0; i < order_a.size(); ++i) {
    if (!SameInstruction(*order_a[i], *order_b[i], index_a, index_b)) return false;
  }
  return true;
}

// Strips a ".N" suffix: the uniquer numbers from the stem.
std::string NameStem(const std::string& base, const char* fallback) {
  if (base.empty()) return fallback;
  size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == base.size()) return base;
  for (size_t i = dot + 1; i < base.size(); ++i) {
    if (base[i] < '0' || base[i] > '9') return base;
  }
  return base.substr(0, dot);
}

std::string Unique(const std::string& base, const char* fallback,
                   absl::flat_hash_set<std::string>& used,
                   absl::flat_hash_map<std::string, int64_t>& next_suffix) {
  if (!base.empty() && used.insert(base).second) return base;
  std::string stem = NameStem(base, fallback);
  // `base` is taken (or empty); its stem needs checking only when it differs.
  if ((stem != base || base.empty()) && used.insert(stem).second) return stem;
  // Most stems are taken once: try ".1" before keeping a counter for them.
  std::string name = stem + ".1";
  auto counter = next_suffix.find(stem);
  if (counter == next_suffix.end() && used.insert(name).second) return name;
  int64_t& n = counter != next_suffix.end() ? counter->second : next_suffix[stem];
  do {
    name = stem + "." + std::to_string(++n);
  } while (!used.insert(name).second);
  return name;
}

// Clones `c` (whose callees are already in `map`) into `out`.
std::unique_ptr<HloComputation> CloneComputation(
    const HloComputation& c, const std::string& name, const ComputationMap& map,
    absl::flat_hash_map<const HloInstruction*, HloInstruction*>& inst_map,
    const std::function<std::string(const std::string&)>& rename) {
  auto copy = std::make_unique<HloComputation>(name);
  copy->set_execution_thread(c.execution_thread());
  const std::vector<HloInstruction*> order = c.MakeInstructionPostOrder();
  for (HloInstruction* inst : order) {
    auto ni = std::make_unique<HloInstruction>(inst->opcode(), inst->shape(), rename(inst->name()));
    ni->set_parameter_number(inst->parameter_number());
    if (inst->has_literal()) ni->set_literal(inst->literal());
    for (HloInstruction* op : inst->operands()) ni->AppendOperand(inst_map.at(op));
    for (const auto& [key, value] : inst->attributes().entries()) {
      ni->mutable_attributes().Set(key, RemapComputations(value, map));
    }
    inst_map[inst] = copy->AddInstruction(std::move(ni));
  }
  for (HloInstruction* inst : order) {
    for (HloInstruction* pred : inst->control_predecessors()) {
      inst_map.at(pred)->AddControlDependencyTo(inst_map.at(inst));
    }
  }
  if (c.root()) copy->set_root(inst_map.at(c.root()));
  return copy;
}

// Computations reachable from `roots` through called computations, callees
// before callers; among independent ones, in the order `roots` lists them.
std::vector<HloComputation*> CalleesFirst(const std::vector<HloComputation*>& roots) {
  std::vector<HloComputation*> order;
  std::unordered_set<const HloComputation*> seen;
  std::vector<std::pair<HloComputation*, std::vector<HloComputation*>>> stack;
  for (HloComputation* start : roots) {
    if (!seen.insert(start).second) continue;
    stack.clear();
    std::vector<HloComputation*> callees;
    auto callees_of = [](const HloComputation* c) {
      std::vector<HloComputation*> out;
      for (const HloInstruction* inst : c->instructions()) {
        for (HloComputation* callee : inst->called_computations()) out.push_back(callee);
      }
      std::reverse(out.begin(), out.end());  // popped from the back: first callee first
      return out;
    };
    stack.emplace_back(start, callees_of(start));
    while (!stack.empty()) {
      auto& [node, pending] = stack.back();
      if (!pending.empty()) {
        HloComputation* next = pending.back();
        pending.pop_back();
        if (seen.insert(next).second) stack.emplace_back(next, callees_of(next));
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> computation) {
  UIR_CHECK(computation->parent_ == nullptr)
      << "computation " << computation->name() << " already belongs to a module";
  computation->parent_ = this;
  computation->unique_id_ = NextUniqueId();
  computation_names_.insert(computation->name());
  for (HloInstruction* inst : computation->instructions()) {
    inst->unique_id_ = NextUniqueId();
    instruction_names_.insert(inst->name());
  }
  computations_.push_back(std::move(computation));
  return computations_.back().get();
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> all;
  all.reserve(computations_.size());
  for (const auto& c : computations_) all.push_back(c.get());
  return CalleesFirst(all);
}

HloComputation* HloModule::FindComputation(std::string_view name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

void HloModule::RemoveComputation(HloComputation* computation) {
  UIR_CHECK(computation != entry_) << "cannot remove the entry computation " << computation->name();
  for (const auto& c : computations_) {
    if (c.get() == computation) continue;
    for (const HloInstruction* inst : c->instructions()) {
      for (const HloComputation* callee : inst->called_computations()) {
        UIR_CHECK(callee != computation) << "cannot remove computation " << computation->name()
                                         << ": %" << inst->name() << " calls it";
      }
    }
  }
  auto it = std::find_if(computations_.begin(), computations_.end(),
                         [&](const auto& c) { return c.get() == computation; });
  UIR_CHECK(it != computations_.end())
      << "computation " << computation->name() << " is not in module " << name_;
  if (schedule_) schedule_->Update(*this);
  computations_.erase(it);
  if (schedule_) schedule_->Update(*this);
}

int64_t HloModule::RemoveUnreachableComputations() {
  if (entry_ == nullptr) return 0;
  std::vector<HloComputation*> live = CalleesFirst({entry_});
  std::unordered_set<const HloComputation*> keep(live.begin(), live.end());
  const size_t before = computations_.size();
  std::erase_if(computations_, [&](const auto& c) { return !keep.count(c.get()); });
  const auto removed = static_cast<int64_t>(before - computations_.size());
  if (removed > 0 && schedule_) schedule_->Update(*this);
  return removed;
}

HloComputation* HloModule::CloneComputationInto(const HloComputation& computation,
                                                const std::string& suffix) {
  ComputationMap map;
  HloComputation* result = nullptr;
  auto rename = [&](const std::string& name) {
    return UniqueInstructionName(suffix.empty() ? name : name + "." + suffix);
  };
  for (HloComputation* c : CalleesFirst({const_cast<HloComputation*>(&computation)})) {
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> inst_map;
    const std::string name =
        UniqueComputationName(suffix.empty() ? c->name() : c->name() + "." + suffix);
    HloComputation* added = AddComputation(CloneComputation(*c, name, map, inst_map, rename));
    map[c] = added;
    if (c == &computation) result = added;
  }
  return result;
}

void HloModule::Cleanup() {
  if (schedule_) schedule_->Update(*this);
  for (const auto& c : computations_) c->FreeRemoved();
}

void HloModule::RegisterInstructionName(const std::string& name) {
  instruction_names_.insert(name);
}

std::string HloModule::UniqueInstructionName(const std::string& base) {
  return Unique(base, "instruction", instruction_names_, next_instruction_suffix_);
}

std::string HloModule::UniqueComputationName(const std::string& base) {
  return Unique(base, "computation", computation_names_, next_computation_suffix_);
}

void HloModule::set_schedule(HloSchedule schedule) { schedule_ = std::move(schedule); }
void HloModule::clear_schedule() { schedule_.reset(); }

std::unique_ptr<HloModule> HloModule::Clone() const {
  auto out = std::make_unique<HloModule>(name_);
  out->config_ = config_;
  ComputationMap computation_map;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> inst_map;
  size_t count = 0;
  for (const auto& c : computations_) count += static_cast<size_t>(c->instruction_count());
  inst_map.reserve(count);
  out->instruction_names_.reserve(instruction_names_.size());
  auto same_name = [](const std::string& name) { return name; };
  for (HloComputation* c : MakeComputationPostOrder()) {
    HloComputation* added =
        out->AddComputation(CloneComputation(*c, c->name(), computation_map, inst_map, same_name));
    computation_map[c] = added;
    if (c == entry_) out->entry_ = added;
  }
  // Keep the original insertion order of computations.
  std::unordered_map<const HloComputation*, std::unique_ptr<HloComputation>> owned;
  for (auto& slot : out->computations_) owned[slot.get()] = std::move(slot);
  out->computations_.clear();
  for (const auto& c : computations_) {
    out->computations_.push_back(std::move(owned.at(computation_map.at(c.get()))));
  }
  if (schedule_) {
    HloSchedule copy;
    for (const auto& c : computations_) {
      if (const auto* seq = schedule_->sequence(*c)) {
        std::vector<HloInstruction*> mapped;
        mapped.reserve(seq->size());
        for (HloInstruction* i : *seq) {
          if (!i->is_removed()) mapped.push_back(inst_map.at(i));
        }
        copy.set_sequence(*computation_map.at(c.get()), std::move(mapped));
      }
    }
    out->schedule_ = std::move(copy);
  }
  return out;
}

bool HloModule::Equals(const HloModule& other) const {
  if (name_ != other.name_ || !(config_ == other.config_)) return false;
  if (computations_.size() != other.computations_.size()) return false;
  if ((entry_ == nullptr) != (other.entry_ == nullptr)) return false;
  if (entry_ && entry_->name() != other.entry_->name()) return false;
  const std::vector<HloComputation*> mine = MakeComputationPostOrder();
  const std::vector<HloComputation*> theirs = other.MakeComputationPostOrder();
  for (size_t i = 0; i < mine.size(); ++i) {
    if (!SameComputation(*mine[i], *theirs[i])) return false;
  }
  return true;
}

}  // namespace uir::hlo
