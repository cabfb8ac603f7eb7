// scatter-expander: scatters the runtime's scatter loop cannot run (several
// operands at once, or a combiner that is neither a replacement nor one
// add, multiply, maximum, minimum, and or or of its two parameters) become
// a while loop over the scatter indices, so they compile like any other
// loop instead of running on the evaluator's buffer loops.
//
// The indices become [N, K] (input batching dimensions added to each index
// vector as iotas of their batch coordinate, the index vector last, the
// other dimensions flattened in order); each operand's updates [N, window]
// (scatter dimensions first, in order, then the window dimensions, with a
// dimension of one for every inserted or batching operand dimension). Step
// i of the loop slices index vector i, reads each operand's window at its
// start (dynamic-slice), applies the combiner written out elementwise on
// the window (old values first, then update i's), and writes the result
// back (dynamic-update-slice). A window that does not fit its operand is
// left unchanged, as the scatter skips it: the step writes back what it
// read. Updates apply in the row-major order of their scatter dimensions
// (HLO leaves the order of updates to one element open). Left alone:
// combiners with anything but scalar elementwise ops, control dependences,
// and scatters the runtime's loop runs.
#ifndef UIR_PASSES_SCATTER_EXPANDER_H_
#define UIR_PASSES_SCATTER_EXPANDER_H_

#include "passes/pass.h"

namespace uir::passes {

class ScatterExpander : public HloPass {
 public:
  std::string_view name() const override { return "scatter-expander"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_SCATTER_EXPANDER_H_
