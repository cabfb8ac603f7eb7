// tuple-simplifier: forwards tuple elements to their readers.
#include "passes/tuple_simplifier.h"

namespace uir::passes {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;

// gte(tuple(..., x, ...), i) -> x.
HloInstruction* ForwardElement(HloInstruction* gte) {
  if (gte->opcode() != HloOpcode::kGetTupleElement) return nullptr;
  HloInstruction* t = gte->operand(0);
  if (t->opcode() != HloOpcode::kTuple) return nullptr;
  const int64_t index = gte->attributes().Get<int64_t>(AttrKey::kIndex);
  HloInstruction* x = t->operand(index);
  return x->shape() == gte->shape() ? x : nullptr;
}

// tuple(gte(v, 0), ..., gte(v, n-1)) -> v when v has exactly n elements.
HloInstruction* CollapseTuple(HloInstruction* tuple) {
  if (tuple->opcode() != HloOpcode::kTuple || tuple->operand_count() == 0) return nullptr;
  HloInstruction* source = nullptr;
  for (int64_t k = 0; k < tuple->operand_count(); ++k) {
    HloInstruction* e = tuple->operand(k);
    if (e->opcode() != HloOpcode::kGetTupleElement ||
        e->attributes().Get<int64_t>(AttrKey::kIndex) != k) {
      return nullptr;
    }
    if (source != nullptr && e->operand(0) != source) return nullptr;
    source = e->operand(0);
  }
  return source->shape() == tuple->shape() ? source : nullptr;
}

}  // namespace

bool TupleSimplifier::Run(hlo::HloModule& module) {
  bool changed = false;
  for (hlo::HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->is_removed() || !i->control_successors().empty()) continue;
      HloInstruction* r = ForwardElement(i);
      if (r == nullptr) r = CollapseTuple(i);
      if (r == nullptr) continue;
      c->ReplaceInstruction(i, r);
      changed = true;
    }
  }
  return changed;
}

}  // namespace uir::passes
