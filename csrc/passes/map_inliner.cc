// map-inliner: a scalar computation applied elementwise, written out.
#include "passes/map_inliner.h"

#include <unordered_map>

#include "hlo/builder.h"

namespace uir::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Whether every instruction of `f` works on scalars, one element at a time.
bool IsScalarElementwise(const HloComputation& f) {
  for (const HloInstruction* i : f.instructions()) {
    if (!i->shape().IsArray() || i->shape().rank() != 0) return false;
    if (i->HasSideEffect() || !i->called_computations().empty()) return false;
    const HloOpcode op = i->opcode();
    if (op != HloOpcode::kParameter && op != HloOpcode::kConstant && !hlo::IsElementwise(op)) {
      return false;
    }
  }
  return true;
}

// The map's computation cloned at the map's dimensions; returns the value
// that replaces the map.
HloInstruction* Inline(HloInstruction* map, const HloComputation& f) {
  HloComputation* caller = map->parent();
  hlo::ComputationBuilder b(caller);
  const hlo::Shape& out = map->shape();
  auto at_map_shape = [&](hlo::PrimitiveType type) {
    hlo::Shape s = out;
    s.set_element_type(type);
    return s;
  };
  std::unordered_map<const HloInstruction*, HloInstruction*> values;
  for (HloInstruction* i : f.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) {
      values[i] = map->operand(i->parameter_number());
    } else if (i->opcode() == HloOpcode::kConstant) {
      HloInstruction* scalar = b.Constant(i->literal(), i->name());
      HloInstruction* splat = b.Broadcast(scalar, out.dimensions(), {});
      splat->mutable_shape() = at_map_shape(i->shape().element_type());
      values[i] = splat;
    } else {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : i->operands()) operands.push_back(values.at(o));
      auto clone = i->CloneWithNewOperands(at_map_shape(i->shape().element_type()), operands);
      clone->set_name(caller->UniqueName(i->name()));
      values[i] = caller->AddInstruction(std::move(clone));
    }
  }
  return values.at(f.root());
}

}  // namespace

bool MapInliner::Run(hlo::HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* map : c->MakeInstructionPostOrder()) {
      if (map->opcode() != HloOpcode::kMap || map->is_removed()) continue;
      if (!map->control_predecessors().empty() || !map->control_successors().empty()) continue;
      const auto* f = map->attributes().Get<HloComputation*>(hlo::AttrKey::kToApply);
      if (!IsScalarElementwise(*f)) continue;
      c->ReplaceInstruction(map, Inline(map, *f));
      changed = true;
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
