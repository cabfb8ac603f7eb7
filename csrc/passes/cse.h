// cse: common-subexpression elimination.
//
// Within each computation, an instruction identical to an earlier one (same
// opcode, shape with layout, operands, literal and attributes; called
// computations compared structurally; the operands of commutative ops in
// either order) is replaced by it. Constants are merged too. Never merges
// parameters, side-effecting instructions or instructions with control
// edges. One pass in post order merges whole identical chains. Safe
// anywhere; run after fusion it merges identical fusions.
#ifndef UIR_PASSES_CSE_H_
#define UIR_PASSES_CSE_H_

#include "passes/pass.h"

namespace uir::passes {

class Cse : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  bool Run(hlo::HloModule& module) override;
};

// CSE of one computation; true if it merged anything.
bool CseComputation(hlo::HloComputation& computation);

}  // namespace uir::passes

#endif  // UIR_PASSES_CSE_H_
