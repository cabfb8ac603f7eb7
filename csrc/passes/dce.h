// dce: removes dead instructions and dead computations.
//
// An instruction is dead when nothing uses it, it is not its computation's
// root, it is not a parameter and it has no side effect (HasSideEffect,
// which looks into called computations). Removing one may make its operands
// dead in turn; the pass removes whole dead chains in one run, in time
// linear in the module. Computations the entry no longer reaches are removed
// too. Safe anywhere in the pipeline, scheduled modules included (the
// schedule is updated).
#ifndef UIR_PASSES_DCE_H_
#define UIR_PASSES_DCE_H_

#include "passes/pass.h"

namespace uir::passes {

class Dce : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  bool Run(hlo::HloModule& module) override;
};

// Removes the dead instructions of one computation; true if any.
bool RemoveDeadInstructions(hlo::HloComputation& computation);

}  // namespace uir::passes

#endif  // UIR_PASSES_DCE_H_
