#include "analysis/dataflow.h"

#include <algorithm>
#include <sstream>

#include "hlo/computation.h"
#include "support/error.h"

namespace uir::analysis {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

std::string HloPosition::ToString() const {
  return "%" + instruction->name() + (index.empty() ? "" : IndexToString(index));
}

std::string HloUse::ToString() const {
  return "%" + instruction->name() + " operand " + std::to_string(operand_number) +
         (operand_index.empty() ? "" : " " + IndexToString(operand_index));
}

HloValue::HloValue(int64_t id, HloInstruction* instruction, ShapeIndex index, bool is_phi)
    : id_(id), instruction_(instruction), index_(std::move(index)), is_phi_(is_phi) {}

const hlo::Shape& HloValue::shape() const { return Subshape(instruction_->shape(), index_); }
int64_t HloValue::bytes() const { return ByteSize(shape()); }

std::string HloValue::ToShortString() const {
  return "%" + instruction_->name() + (index_.empty() ? "" : IndexToString(index_)) +
         (is_phi_ ? " (phi)" : "");
}

// --- InstructionValueSet ------------------------------------------------------

InstructionValueSet::InstructionValueSet(const hlo::Shape& shape) {
  // Pre-order walk recording each node's children.
  struct Frame {
    const hlo::Shape* shape;
    int32_t node;
  };
  indices_.push_back({});
  children_.emplace_back();
  std::vector<Frame> work = {{&shape, 0}};
  while (!work.empty()) {
    Frame f = work.back();
    work.pop_back();
    if (!f.shape->IsTuple()) continue;
    std::vector<Frame> kids;
    for (int64_t k = 0; k < f.shape->tuple_shapes_size(); ++k) {
      ShapeIndex index = indices_[f.node];
      index.push_back(k);
      const auto node = static_cast<int32_t>(indices_.size());
      indices_.push_back(std::move(index));
      children_.emplace_back();
      children_[f.node].push_back(node);
      kids.push_back({&f.shape->tuple_shapes(k), node});
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) work.push_back(*it);
  }
  values_.assign(indices_.size(), nullptr);
}

size_t InstructionValueSet::Node(const ShapeIndex& index) const {
  size_t node = 0;
  for (int64_t k : index) {
    UIR_CHECK(k >= 0 && static_cast<size_t>(k) < children_[node].size())
        << "index " << IndexToString(index) << " is outside the value set";
    node = children_[node][k];
  }
  return node;
}

void InstructionValueSet::CopyFrom(const InstructionValueSet& source, const ShapeIndex& from,
                                   const ShapeIndex& to) {
  for (size_t n = 0; n < source.indices_.size(); ++n) {
    const ShapeIndex& index = source.indices_[n];
    if (index.size() < from.size() || !std::equal(from.begin(), from.end(), index.begin()))
      continue;
    ShapeIndex target = to;
    target.insert(target.end(), index.begin() + static_cast<int64_t>(from.size()), index.end());
    set(target, source.values_[n]);
  }
}

// --- The analysis ---------------------------------------------------------------

std::vector<HloComputation*> HloDataflowAnalysis::SequentialCallees(const HloInstruction& i) {
  const hlo::AttributeMap& a = i.attributes();
  switch (i.opcode()) {
    case HloOpcode::kWhile:
      return {a.Get<HloComputation*>(AttrKey::kCondition), a.Get<HloComputation*>(AttrKey::kBody)};
    case HloOpcode::kConditional:
      if (auto list = a.GetOr<std::vector<HloComputation*>>(AttrKey::kBranchComputations))
        return *list;
      return {a.Get<HloComputation*>(AttrKey::kTrueComputation),
              a.Get<HloComputation*>(AttrKey::kFalseComputation)};
    case HloOpcode::kCall:
      return {a.Get<HloComputation*>(AttrKey::kToApply)};
    case HloOpcode::kAsyncStart:
      if (auto c = a.GetOr<HloComputation*>(AttrKey::kCalls)) return {*c};
      return {};
    default:
      return {};
  }
}

HloValue* HloDataflowAnalysis::Define(HloInstruction* instruction, const ShapeIndex& index,
                                      bool is_phi) {
  auto v =
      std::make_unique<HloValue>(static_cast<int64_t>(values_.size()), instruction, index, is_phi);
  v->positions_.push_back({instruction, index});
  HloValue* raw = v.get();
  values_.push_back(std::move(v));
  Set(instruction).set(index, raw);
  return raw;
}

InstructionValueSet& HloDataflowAnalysis::Set(const HloInstruction* instruction) {
  auto& slot = sets_[instruction];
  if (!slot) slot = std::make_unique<InstructionValueSet>(instruction->shape());
  return *slot;
}

const InstructionValueSet& HloDataflowAnalysis::value_set(const HloInstruction* i) const {
  auto it = sets_.find(i);
  UIR_CHECK(it != sets_.end()) << "%" << i->name() << " is not in an analysed computation";
  return *it->second;
}

bool HloDataflowAnalysis::Defines(const HloInstruction* i, const ShapeIndex& index) const {
  const HloValue& v = ValueAt(i, index);
  return v.instruction() == i && v.index() == index;
}

bool HloDataflowAnalysis::IsAnalysed(const HloComputation* c) const {
  return c == module_.entry() || caller_.contains(c);
}

const HloInstruction* HloDataflowAnalysis::Caller(const HloComputation* c) const {
  auto it = caller_.find(c);
  return it == caller_.end() ? nullptr : it->second;
}

void HloDataflowAnalysis::DefineAll(HloInstruction* i, bool is_phi) {
  const std::vector<ShapeIndex> indices = Set(i).indices();
  for (const ShapeIndex& index : indices) Define(i, index, is_phi);
}

void HloDataflowAnalysis::Visit(const HloComputation* c, const HloInstruction* caller) {
  if (caller != nullptr) {
    auto [it, inserted] = caller_.emplace(c, caller);
    if (!inserted) {
      throw InternalError("computation " + c->name() + " is run by both %" + it->second->name() +
                          " and %" + caller->name() +
                          "; buffers need each sequential computation run from one place "
                          "(run the flatten-call-graph pass first)");
    }
  }
  computations_.push_back(c);
  for (HloInstruction* i : c->MakeInstructionPostOrder()) Propagate(i);
}

void HloDataflowAnalysis::Propagate(HloInstruction* i) {
  // Passes the callee parameters their arguments' values.
  auto bind = [&](const HloComputation* callee, int64_t first_operand) {
    for (int64_t k = 0; k < callee->num_parameters(); ++k) {
      HloInstruction* p = callee->parameter(k);
      Set(p).CopyFrom(Set(i->operand(first_operand + k)), {}, {});
    }
  };
  auto forward = [&](const HloInstruction* source, const ShapeIndex& from) {
    Set(i).CopyFrom(Set(source), from, {});
  };
  const HloComputation* parent = i->parent();
  switch (i->opcode()) {
    case HloOpcode::kParameter:
      if (parent == module_.entry()) DefineAll(i, false);
      // Others were bound by their caller.
      return;
    case HloOpcode::kGetTupleElement:
      forward(i->operand(0), {i->attributes().Get<int64_t>(AttrKey::kIndex)});
      return;
    case HloOpcode::kBitcast:
    case HloOpcode::kDomain:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAsyncUpdate:
      forward(i->operand(0), {});
      return;
    case HloOpcode::kTuple:
      Define(i, {}, false);
      for (int64_t k = 0; k < i->operand_count(); ++k) Set(i).CopyFrom(Set(i->operand(k)), {}, {k});
      return;
    case HloOpcode::kWhile: {
      DefineAll(i, /*is_phi=*/true);
      const std::vector<HloComputation*> callees = SequentialCallees(*i);
      for (const HloComputation* c : callees) {
        Set(c->parameter(0)).CopyFrom(Set(i), {}, {});
        Visit(c, i);
      }
      const InstructionValueSet& init = Set(i->operand(0));
      const InstructionValueSet& result = Set(callees[1]->root());
      InstructionValueSet& phi = Set(i);
      for (const ShapeIndex& index : phi.indices()) {
        HloValue* p = phi.at(index);
        for (HloValue* in : {init.at(index), result.at(index)}) {
          if (std::find(p->phi_inputs_.begin(), p->phi_inputs_.end(), in) == p->phi_inputs_.end())
            p->phi_inputs_.push_back(in);
        }
      }
      return;
    }
    case HloOpcode::kConditional: {
      DefineAll(i, /*is_phi=*/true);
      const std::vector<HloComputation*> branches = SequentialCallees(*i);
      for (size_t b = 0; b < branches.size(); ++b) {
        bind(branches[b], static_cast<int64_t>(b) + 1);
        Visit(branches[b], i);
      }
      InstructionValueSet& phi = Set(i);
      for (const ShapeIndex& index : phi.indices()) {
        HloValue* p = phi.at(index);
        for (const HloComputation* b : branches) {
          HloValue* in = Set(b->root()).at(index);
          if (std::find(p->phi_inputs_.begin(), p->phi_inputs_.end(), in) == p->phi_inputs_.end())
            p->phi_inputs_.push_back(in);
        }
      }
      return;
    }
    case HloOpcode::kCall: {
      const HloComputation* callee = SequentialCallees(*i)[0];
      bind(callee, 0);
      Visit(callee, i);
      forward(callee->root(), {});
      return;
    }
    case HloOpcode::kAsyncStart: {
      const std::vector<HloComputation*> callees = SequentialCallees(*i);
      const hlo::Shape& s = i->shape();
      if (callees.empty() || !s.IsTuple() || s.tuple_shapes_size() < 2 ||
          !s.tuple_shapes(0).IsTuple()) {
        DefineAll(i, false);
        return;
      }
      Define(i, {}, false);
      Define(i, {0}, false);
      for (int64_t k = 0; k < i->operand_count(); ++k)
        Set(i).CopyFrom(Set(i->operand(k)), {}, {0, k});
      bind(callees[0], 0);
      Visit(callees[0], i);
      Set(i).CopyFrom(Set(callees[0]->root()), {}, {1});
      for (const ShapeIndex& index : Set(i).indices()) {
        if (index.size() >= 1 && index[0] >= 2) Define(i, index, false);
      }
      return;
    }
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone: {
      // The done yields what its start wrote: the start's result itself
      // (all-reduce-start of one array), or its element {1} ({0} for
      // copy-start), the start's other elements being its operands and
      // context.
      const HloInstruction* start = i->operand(0);
      const hlo::Shape& s = start->shape();
      const int64_t k = i->opcode() == HloOpcode::kCopyDone ? 0 : 1;
      if (i->opcode() != HloOpcode::kAsyncDone && i->opcode() != HloOpcode::kCopyDone &&
          s.Compatible(i->shape())) {
        forward(start, {});
      } else if (s.IsTuple() && s.tuple_shapes_size() > k &&
                 s.tuple_shapes(k).Compatible(i->shape())) {
        forward(start, {k});
      } else {
        DefineAll(i, false);
      }
      return;
    }
    case HloOpcode::kCopyStart: {
      DefineAll(i, false);
      if (i->shape().IsTuple() && i->shape().tuple_shapes_size() >= 2)
        Set(i).CopyFrom(Set(i->operand(0)), {}, {1});
      return;
    }
    default:
      DefineAll(i, false);
      return;
  }
}

namespace {

// Whether `user` reads its operands' values (not merely passes them on).
bool ReadsOperands(const HloInstruction& user) {
  switch (user.opcode()) {
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
      return false;
    default:
      return true;
  }
}

}  // namespace

void HloDataflowAnalysis::ComputePositionsAndUses() {
  for (const HloComputation* c : computations_) {
    for (HloInstruction* i : c->instructions()) {
      const InstructionValueSet& set = Set(i);
      for (size_t n = 0; n < set.indices().size(); ++n) {
        HloValue* v = set.values()[n];
        UIR_CHECK(v != nullptr) << "%" << i->name() << " has no value at "
                                << IndexToString(set.indices()[n]);
        if (v->instruction() == i && v->index() == set.indices()[n]) continue;
        v->positions_.push_back({i, set.indices()[n]});
      }
      if (!ReadsOperands(*i)) continue;
      for (int64_t k = 0; k < i->operand_count(); ++k) {
        const InstructionValueSet& in = Set(i->operand(k));
        for (size_t n = 0; n < in.indices().size(); ++n) {
          HloValue* v = in.values()[n];
          HloUse use{i, k, in.indices()[n]};
          // An operand read twice through one value counts once per operand.
          bool seen = false;
          for (const HloUse& u : v->uses_) seen |= u.instruction == i && u.operand_number == k;
          if (!seen) v->uses_.push_back(std::move(use));
        }
      }
    }
  }
  for (HloValue* v : Set(module_.entry()->root()).values()) v->live_out_ = true;
}

std::unique_ptr<HloDataflowAnalysis> HloDataflowAnalysis::Run(const hlo::HloModule& module) {
  UIR_CHECK(module.entry() != nullptr) << "module " << module.name() << " has no entry";
  std::unique_ptr<HloDataflowAnalysis> a(new HloDataflowAnalysis(module));
  a->Visit(module.entry(), nullptr);
  a->ComputePositionsAndUses();
  return a;
}

std::string HloDataflowAnalysis::ToString() const {
  std::ostringstream os;
  os << "HloDataflowAnalysis, module " << module_.name() << ": " << values_.size() << " values\n";
  for (const auto& v : values_) {
    os << "  value " << v->id() << " " << v->ToShortString() << " " << v->shape().ToString()
       << (v->live_out() ? " live-out" : "") << "\n";
    os << "    positions:";
    for (const HloPosition& p : v->positions()) os << " " << p.ToString();
    os << "\n    uses:";
    for (const HloUse& u : v->uses()) os << " " << u.ToString() << ";";
    if (v->is_phi()) {
      os << "\n    phi inputs:";
      for (const HloValue* in : v->phi_inputs()) os << " " << in->id();
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace uir::analysis
