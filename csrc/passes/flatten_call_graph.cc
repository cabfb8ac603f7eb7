#include "passes/flatten_call_graph.h"

#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"

namespace uir::passes {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// The attribute slots through which `i` runs computations in sequence.
std::vector<AttrKey> SequentialKeys(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kWhile:
      return {AttrKey::kCondition, AttrKey::kBody};
    case HloOpcode::kConditional:
      return {AttrKey::kBranchComputations, AttrKey::kTrueComputation, AttrKey::kFalseComputation};
    case HloOpcode::kCall:
      return {AttrKey::kToApply};
    case HloOpcode::kAsyncStart:
      return {AttrKey::kCalls};
    default:
      return {};
  }
}

class Flattener {
 public:
  explicit Flattener(hlo::HloModule& m) : m_(m) {}

  bool Visit(HloComputation* c) {
    bool changed = false;
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      for (AttrKey key : SequentialKeys(*i)) {
        hlo::AttrValue* slot = i->mutable_attributes().FindMutable(key);
        if (slot == nullptr) continue;
        if (auto* one = std::get_if<HloComputation*>(slot)) {
          HloComputation* before = *one;
          changed |= Claim(*one);
          if (*one != before && i->opcode() == HloOpcode::kAsyncStart) Retarget(i, before, *one);
        } else if (auto* list = std::get_if<std::vector<HloComputation*>>(slot)) {
          for (HloComputation*& b : *list) changed |= Claim(b);
        }
      }
    }
    return changed;
  }

 private:
  // Takes `c` for this caller, cloning it if another caller has it; then
  // flattens inside it.
  bool Claim(HloComputation*& c) {
    bool changed = false;
    if (!claimed_.insert(c).second) {
      c = m_.CloneComputationInto(*c, "clone");
      claimed_.insert(c);
      changed = true;
    }
    return Visit(c) || changed;
  }

  // async-update and async-done name the wrapped computation too.
  static void Retarget(HloInstruction* start, HloComputation* from, HloComputation* to) {
    std::vector<HloInstruction*> work = {start};
    while (!work.empty()) {
      HloInstruction* x = work.back();
      work.pop_back();
      for (HloInstruction* u : x->users()) {
        if (!hlo::IsAsyncOpcode(u->opcode())) continue;
        hlo::AttrValue* slot = u->mutable_attributes().FindMutable(AttrKey::kCalls);
        if (slot != nullptr) {
          if (auto* one = std::get_if<HloComputation*>(slot); one && *one == from) *one = to;
        }
        work.push_back(u);
      }
    }
  }

  hlo::HloModule& m_;
  absl::flat_hash_set<const HloComputation*> claimed_;
};

}  // namespace

bool FlattenCallGraph::Run(hlo::HloModule& module) {
  if (module.entry() == nullptr) return false;
  Flattener f(module);
  return f.Visit(module.entry());
}

}  // namespace uir::passes
