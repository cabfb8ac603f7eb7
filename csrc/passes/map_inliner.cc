// map-inliner: a scalar computation applied elementwise, written out.
#include "passes/map_inliner.h"

#include <vector>

#include "passes/scalar_inline.h"

namespace uir::passes {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

}  // namespace

bool MapInliner::Run(hlo::HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* map : c->MakeInstructionPostOrder()) {
      if (map->opcode() != HloOpcode::kMap || map->is_removed()) continue;
      if (!map->control_predecessors().empty() || !map->control_successors().empty()) continue;
      const auto* f = map->attributes().Get<HloComputation*>(hlo::AttrKey::kToApply);
      if (!IsScalarElementwise(*f)) continue;
      std::vector<HloInstruction*> args(map->operands().begin(), map->operands().end());
      c->ReplaceInstruction(map, InlineScalar(*f, args, map->shape(), c).at(0));
      changed = true;
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
