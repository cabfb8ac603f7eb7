// Instruction identity and hashing (for CSE), and the module fingerprint
// (for the pass checker and the compilation cache).
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

#include "hlo/module.h"
#include "hlo/printer.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

// FNV-1a over bytes, then mixed: stable across runs and platforms.
struct Hasher {
  uint64_t h = 1469598103934665603ull;
  void Bytes(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  void Int(int64_t v) { Bytes(&v, sizeof v); }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    Bytes(s.data(), s.size());
  }
};

bool ComputationsIdentical(const HloComputation& a, const HloComputation& b);

bool SameAttributes(const HloInstruction& a, const HloInstruction& b, bool compare_computations) {
  const auto& ea = a.attributes().entries();
  const auto& eb = b.attributes().entries();
  size_t i = 0, j = 0;
  auto skip = [](const auto& entries, size_t& k) {
    while (k < entries.size() && entries[k].first == AttrKey::kMetadata) ++k;
  };
  auto same_computation = [&](const HloComputation* x, const HloComputation* y) {
    return x == y || (compare_computations && ComputationsIdentical(*x, *y));
  };
  for (;;) {
    skip(ea, i);
    skip(eb, j);
    if (i == ea.size() || j == eb.size()) return i == ea.size() && j == eb.size();
    if (ea[i].first != eb[j].first) return false;
    const AttrValue& va = ea[i].second;
    const AttrValue& vb = eb[j].second;
    if (va.index() != vb.index()) return false;
    if (const auto* ca = std::get_if<HloComputation*>(&va)) {
      if (!same_computation(*ca, std::get<HloComputation*>(vb))) return false;
    } else if (const auto* la = std::get_if<std::vector<HloComputation*>>(&va)) {
      const auto& lb = std::get<std::vector<HloComputation*>>(vb);
      if (la->size() != lb.size()) return false;
      for (size_t k = 0; k < la->size(); ++k) {
        if (!same_computation((*la)[k], lb[k])) return false;
      }
    } else if (!(va == vb)) {
      return false;
    }
    ++i;
    ++j;
  }
}

// Same structure position by position in post order (names ignored).
bool ComputationsIdentical(const HloComputation& a, const HloComputation& b) {
  if (&a == &b) return true;
  if (a.instruction_count() != b.instruction_count() || a.num_parameters() != b.num_parameters()) {
    return false;
  }
  const auto oa = a.MakeInstructionPostOrder();
  const auto ob = b.MakeInstructionPostOrder();
  std::unordered_map<const HloInstruction*, size_t> ia, ib;
  for (size_t k = 0; k < oa.size(); ++k) {
    ia[oa[k]] = k;
    ib[ob[k]] = k;
  }
  if (ia.at(a.root()) != ib.at(b.root())) return false;
  for (size_t k = 0; k < oa.size(); ++k) {
    const HloInstruction& x = *oa[k];
    const HloInstruction& y = *ob[k];
    if (x.opcode() != y.opcode() || !(x.shape() == y.shape()) ||
        x.parameter_number() != y.parameter_number() || x.operand_count() != y.operand_count() ||
        x.has_literal() != y.has_literal() || (x.has_literal() && !(x.literal() == y.literal()))) {
      return false;
    }
    for (int64_t n = 0; n < x.operand_count(); ++n) {
      if (ia.at(x.operand(n)) != ib.at(y.operand(n))) return false;
    }
    if (!SameAttributes(x, y, /*compare_computations=*/true)) return false;
  }
  return true;
}

// Everything Shape's == compares, without building its text.
void HashShape(Hasher& h, const Shape& s) {
  h.Int(s.IsTuple() ? -1 : s.IsBuffer() ? -2 : static_cast<int64_t>(s.element_type()));
  if (s.IsTuple() || s.IsBuffer()) {
    h.Int(s.tuple_shapes_size());
    for (const Shape& e : s.tuple_shapes()) HashShape(h, e);
    return;
  }
  h.Int(s.rank());
  for (int64_t k = 0; k < s.rank(); ++k) {
    h.Int(s.dimensions(k));
    h.Int(s.is_dynamic_dimension(k));
  }
  if (!s.has_layout()) {
    h.Int(-3);
  } else if (s.layout().HasOnlyMinorToMajor()) {
    for (int64_t d : s.layout().minor_to_major) h.Int(d);
  } else {
    h.Str(LayoutToString(s.layout()));
  }
}

}  // namespace

bool HloInstruction::Identical(const HloInstruction& other, bool compare_computations,
                               bool any_operand_order) const {
  if (opcode_ != other.opcode_ || !(shape_ == other.shape_) ||
      parameter_number_ != other.parameter_number_) {
    return false;
  }
  if (operands_ != other.operands_) {
    const bool crosswise = any_operand_order && operands_.size() == 2 &&
                           other.operands_.size() == 2 && operands_[0] == other.operands_[1] &&
                           operands_[1] == other.operands_[0];
    if (!crosswise) return false;
  }
  if ((literal_ == nullptr) != (other.literal_ == nullptr)) return false;
  if (literal_ && !(*literal_ == *other.literal_ && literal_->shape() == other.literal_->shape()))
    return false;
  return SameAttributes(*this, other, compare_computations);
}

size_t HloInstruction::Hash(bool any_operand_order) const {
  Hasher h;
  h.Int(static_cast<int64_t>(opcode_));
  h.Int(parameter_number_);
  h.Int(static_cast<int64_t>(shape_.IsTuple() ? -1 : static_cast<int64_t>(shape_.element_type())));
  if (shape_.IsArray()) {
    for (int64_t d : shape_.dimensions()) h.Int(d);
  }
  if (any_operand_order && operands_.size() == 2) {  // commutative ops are binary
    h.Int(std::min(operands_[0]->unique_id(), operands_[1]->unique_id()));
    h.Int(std::max(operands_[0]->unique_id(), operands_[1]->unique_id()));
  } else if (any_operand_order) {
    std::vector<int64_t> ids;
    for (const HloInstruction* o : operands_) ids.push_back(o->unique_id());
    std::sort(ids.begin(), ids.end());
    for (int64_t id : ids) h.Int(id);
  } else {
    for (const HloInstruction* o : operands_) h.Int(o->unique_id());
  }
  if (literal_) {
    auto bytes = literal_->bytes();
    h.Bytes(bytes.data(), std::min<size_t>(bytes.size(), 64));
    h.Int(static_cast<int64_t>(bytes.size()));
  }
  for (const auto& [key, value] : attrs_.entries()) {
    if (key == AttrKey::kMetadata) continue;
    h.Int(static_cast<int64_t>(key));
    if (const auto* i = std::get_if<int64_t>(&value)) h.Int(*i);
    if (const auto* e = std::get_if<EnumValue>(&value)) h.Int(e->index);
    if (const auto* s = std::get_if<std::string>(&value)) h.Str(*s);
    if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) {
      for (int64_t v : *l) h.Int(v);
    }
  }
  return static_cast<size_t>(h.h);
}

uint64_t HloModule::Fingerprint() const {
  Hasher h;
  std::unordered_map<const HloComputation*, int64_t> computation_index;
  const std::vector<HloComputation*> computations = MakeComputationPostOrder();
  for (size_t k = 0; k < computations.size(); ++k) {
    computation_index[computations[k]] = static_cast<int64_t>(k);
  }
  h.Int(entry_ ? computation_index.at(entry_) : -1);
  h.Int(schedule_.has_value());
  for (const HloComputation* c : computations) {
    h.Str("computation");
    h.Str(c->execution_thread());
    const std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    // Post-order positions by list slot (dense, unlike unique ids).
    std::vector<int64_t> position(c->instructions_.size(), -1);
    for (size_t k = 0; k < order.size(); ++k) {
      position[static_cast<size_t>(order[k]->index_in_parent_)] = static_cast<int64_t>(k);
    }
    auto index_of = [&](const HloInstruction* i) {
      UIR_CHECK(i->parent() == c && !i->is_removed())
          << "%" << i->name() << " is used outside its computation";
      return position[static_cast<size_t>(i->index_in_parent_)];
    };
    h.Int(c->root() ? index_of(c->root()) : -1);
    for (const HloInstruction* inst : order) {
      h.Int(static_cast<int64_t>(inst->opcode()));
      HashShape(h, inst->shape());
      h.Int(inst->parameter_number());
      for (const HloInstruction* o : inst->operands()) h.Int(index_of(o));
      h.Int(-2);
      for (const HloInstruction* p : inst->control_predecessors()) h.Int(index_of(p));
      if (inst->has_literal()) {
        auto bytes = inst->literal().bytes();
        h.Bytes(bytes.data(), bytes.size());
        HashShape(h, inst->literal().shape());
      }
      for (const auto& [key, value] : inst->attributes().entries()) {
        if (key == AttrKey::kMetadata) continue;
        h.Int(static_cast<int64_t>(key));
        if (const auto* callee = std::get_if<HloComputation*>(&value)) {
          h.Int(computation_index.at(*callee));
        } else if (const auto* list = std::get_if<std::vector<HloComputation*>>(&value)) {
          for (const HloComputation* callee : *list) h.Int(computation_index.at(callee));
        } else {
          h.Str(AttributeValueText(key, value));
        }
      }
    }
    if (schedule_) {
      if (const auto* seq = schedule_->sequence(*c)) {
        for (const HloInstruction* i : *seq) {
          if (!i->is_removed()) h.Int(index_of(i));
        }
      }
    }
  }
  return h.h;
}

}  // namespace uir::hlo
