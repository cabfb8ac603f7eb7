#include "passes/copy_insertion.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "hlo/builder.h"
#include "passes/dataflow_order.h"
#include "passes/fusion/priority_fusion.h"

namespace uir::passes {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

bool IsView(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kBitcast || i.opcode() == HloOpcode::kGetTupleElement;
}

// The instructions that read `value`'s buffer, looking through views of it
// (bitcasts; get-tuple-element of element `index` when `index` >= 0).
std::vector<HloInstruction*> Readers(HloInstruction* value) {
  std::vector<HloInstruction*> out;
  std::vector<HloInstruction*> work = {value};
  std::unordered_set<HloInstruction*> seen;
  while (!work.empty()) {
    HloInstruction* v = work.back();
    work.pop_back();
    for (HloInstruction* u : v->users()) {
      if (!seen.insert(u).second) continue;
      if (u->opcode() == HloOpcode::kBitcast) {
        work.push_back(u);
      } else {
        out.push_back(u);
      }
    }
  }
  return out;
}

// The value a view chain starts from.
const HloInstruction* Base(const HloInstruction* x) {
  while (x->opcode() == HloOpcode::kBitcast) x = x->operand(0);
  return x;
}

// Never written in place: constants and the entry's parameters (and views
// of them).
bool ReadOnly(const HloInstruction* x, const HloComputation* entry) {
  x = Base(x);
  while (x->opcode() == HloOpcode::kGetTupleElement) x = Base(x->operand(0));
  return x->opcode() == HloOpcode::kConstant ||
         (x->opcode() == HloOpcode::kParameter && x->parent() == entry);
}

HloInstruction* AddCopy(HloInstruction* x) {
  hlo::ComputationBuilder b(x->parent());
  return b.Add(HloOpcode::kCopy, {x}, {}, x->shape());
}

// Operand positions an op overwrites in place.
std::vector<int64_t> InPlaceOperands(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
      return {0};
    case HloOpcode::kScatter: {
      std::vector<int64_t> out;
      for (int64_t k = 0; k < (i.operand_count() - 1) / 2; ++k) out.push_back(k);
      return out;
    }
    case HloOpcode::kFusion: {
      const HloComputation* fused = i.attributes().Get<HloComputation*>(AttrKey::kCalls);
      const std::vector<int64_t> inner = InPlaceOperands(*fused->root());
      std::vector<int64_t> out;
      for (int64_t k : inner) {
        const HloInstruction* p = Base(fused->root()->operand(k));
        if (p->opcode() == HloOpcode::kParameter) out.push_back(p->parameter_number());
      }
      return out;
    }
    default:
      return {};
  }
}

class Inserter {
 public:
  Inserter(HloComputation& c, const HloComputation* entry) : c_(c), entry_(entry), order_(c) {}

  // `writer` overwrites `value`'s buffer: copy it unless that is safe.
  bool Unsafe(HloInstruction* value, const HloInstruction* writer,
              const HloInstruction* except = nullptr) {
    if (ReadOnly(value, entry_)) return true;
    const HloInstruction* base = Base(value);
    if (base == c_.root() || value == c_.root()) return true;
    for (HloInstruction* r : Readers(const_cast<HloInstruction*>(base))) {
      if (r == writer || r == except) continue;
      if (r == c_.root()) return true;  // live out
      if (!order_.After(writer, r)) return true;
    }
    return false;
  }

  bool InPlaceOps() {
    bool changed = false;
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) {
      for (int64_t k : InPlaceOperands(*i)) {
        HloInstruction* x = i->operand(k);
        if (!Unsafe(x, i)) continue;
        i->ReplaceOperand(k, AddCopy(x));
        changed = true;
      }
      if (i->opcode() == HloOpcode::kWhile) changed |= LoopInit(i);
    }
    return changed;
  }

  // The initial state becomes the loop's buffers.
  bool LoopInit(HloInstruction* w) {
    HloInstruction* init = w->operand(0);
    bool changed = false;
    if (init->opcode() != HloOpcode::kTuple) {
      if (!Unsafe(init, w)) return false;
      w->ReplaceOperand(0, AddCopy(init));
      return true;
    }
    std::vector<HloInstruction*> seen;
    for (int64_t k = 0; k < init->operand_count(); ++k) {
      HloInstruction* v = init->operand(k);
      if (!v->shape().IsArray()) continue;
      const bool repeated = std::find(seen.begin(), seen.end(), v) != seen.end();
      seen.push_back(v);
      if (repeated || Unsafe(v, w, init)) {
        init->ReplaceOperand(k, AddCopy(v));
        changed = true;
      }
    }
    return changed;
  }

  // `out` (an element of the root) is written into the buffer `old`
  // (a parameter, or an element of one): a copy ordered after every reader
  // of `old` that may otherwise come later.
  bool OrderedCopy(HloInstruction* root, int64_t k, const std::vector<HloInstruction*>& old) {
    HloInstruction* out = root->operand(k);
    std::vector<HloInstruction*> readers;
    for (HloInstruction* view : old) {
      for (HloInstruction* r : Readers(view))
        if (std::find(readers.begin(), readers.end(), r) == readers.end()) readers.push_back(r);
    }
    std::vector<HloInstruction*> late;
    for (HloInstruction* r : readers) {
      if (r == root) continue;
      if (r == out && hlo::IsElementwise(out->opcode())) continue;  // same index
      if (r == out || !order_.After(out, r)) late.push_back(r);
    }
    if (late.empty()) return false;
    HloInstruction* copy = AddCopy(out);
    root->ReplaceOperand(k, copy);
    for (HloInstruction* r : late)
      if (r != out) r->AddControlDependencyTo(copy);
    return true;
  }

  // A loop body: each result element becomes the state element's buffer.
  bool LoopBody() {
    HloInstruction* root = c_.root();
    HloInstruction* param = c_.parameter(0);
    if (root->opcode() != HloOpcode::kTuple) return false;
    // State index -> the get-tuple-elements reading it.
    std::unordered_map<int64_t, std::vector<HloInstruction*>> element;
    for (HloInstruction* u : param->users()) {
      if (u->opcode() == HloOpcode::kGetTupleElement)
        element[u->attributes().Get<int64_t>(AttrKey::kIndex)].push_back(u);
    }
    bool changed = false;
    std::vector<HloInstruction*> seen;
    for (int64_t k = 0; k < root->operand_count(); ++k) {
      HloInstruction* r = root->operand(k);
      if (!r->shape().IsArray()) continue;
      const bool repeated = std::find(seen.begin(), seen.end(), r) != seen.end();
      seen.push_back(r);
      auto it = element.find(k);
      const bool passed_through =
          it != element.end() &&
          std::find(it->second.begin(), it->second.end(), r) != it->second.end();
      if (passed_through && !repeated) continue;
      const HloInstruction* base = Base(r);
      if (repeated || base->opcode() == HloOpcode::kConstant || IsView(*base) ||
          base->opcode() == HloOpcode::kParameter) {
        root->ReplaceOperand(k, AddCopy(r));
        changed = true;
        continue;
      }
      if (it != element.end()) changed |= OrderedCopy(root, k, it->second);
    }
    return changed;
  }

  // Entry outputs: no parameter, constant or repeated value; aliased ones
  // written only after the parameter's readers.
  bool EntryOutputs(const hlo::ModuleConfig& config) {
    bool changed = false;
    HloInstruction* root = c_.root();
    if (root->opcode() != HloOpcode::kTuple) {
      if (root->shape().IsArray() && ReadOnly(root, entry_)) {
        c_.set_root(AddCopy(root));
        changed = true;
      }
    } else {
      std::vector<HloInstruction*> seen;
      for (int64_t k = 0; k < root->operand_count(); ++k) {
        HloInstruction* v = root->operand(k);
        if (!v->shape().IsArray()) continue;
        const bool repeated = std::find(seen.begin(), seen.end(), v) != seen.end();
        seen.push_back(v);
        const bool aliased_pass_through = Aliased(config, k, v);
        if (!aliased_pass_through && (repeated || ReadOnly(v, entry_))) {
          root->ReplaceOperand(k, AddCopy(v));
          changed = true;
        }
      }
    }
    for (const hlo::InputOutputAlias& a : config.input_output_alias) {
      if (a.output_index.size() != 1 || root->opcode() != HloOpcode::kTuple ||
          !a.parameter_index.empty() || a.parameter >= c_.num_parameters())
        continue;
      const int64_t k = a.output_index[0];
      if (k >= root->operand_count()) continue;
      HloInstruction* param = c_.parameter(a.parameter);
      if (Base(root->operand(k)) == param) continue;
      changed |= OrderedCopy(root, k, {param});
    }
    return changed;
  }

 private:
  // The output is the very parameter it is aliased with: no copy.
  bool Aliased(const hlo::ModuleConfig& config, int64_t k, const HloInstruction* v) const {
    for (const hlo::InputOutputAlias& a : config.input_output_alias) {
      if (a.output_index.size() == 1 && a.output_index[0] == k && a.parameter_index.empty() &&
          v->opcode() == HloOpcode::kParameter && v->parameter_number() == a.parameter)
        return true;
    }
    return false;
  }

  HloComputation& c_;
  const HloComputation* entry_;
  DataflowOrder order_;
};

// Same-layout copies with no control edges: removed (insertion puts back
// the ones that are needed).
bool RemoveCopies(HloComputation& c) {
  bool changed = false;
  for (HloInstruction* i : c.MakeInstructionPostOrder()) {
    if (i->opcode() != HloOpcode::kCopy || i->shape() != i->operand(0)->shape() ||
        !i->control_predecessors().empty() || !i->control_successors().empty())
      continue;
    if (i == c.root()) {
      c.set_root(i->operand(0));
    } else {
      i->ReplaceAllUsesWith(i->operand(0));
    }
    c.RemoveInstruction(i);
    changed = true;
  }
  return changed;
}

}  // namespace

bool CopyInsertion::Run(hlo::HloModule& module) {
  const uint64_t before = module.Fingerprint();
  std::unordered_set<const HloComputation*> bodies;
  for (const auto& c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile)
        bodies.insert(i->attributes().Get<HloComputation*>(AttrKey::kBody));
    }
  }
  for (HloComputation* c : FusionTargets(module)) {
    RemoveCopies(*c);
    Inserter inserter(*c, module.entry());
    inserter.InPlaceOps();
    if (bodies.count(c)) inserter.LoopBody();
    if (c == module.entry()) inserter.EntryOutputs(module.config());
  }
  return module.Fingerprint() != before;
}

}  // namespace uir::passes
