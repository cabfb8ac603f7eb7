// copy-insertion: copies wherever writing a buffer in place would clobber a
// value still needed, and none where they are not needed.
//
// Some ops write their result into an operand's buffer: dynamic-update-slice
// and scatter (and fusions whose root is one of them, into the fusion
// operand it updates), while loops (the initial state and each body result
// become the loop state's buffers), and entry outputs aliased to a
// parameter by input_output_alias. Such a write is safe only if nothing
// else reads the old value afterwards: the buffer must not be a parameter
// of the entry or a constant, not be live out of its computation, and every
// other reader must come before the writer in the dataflow. Otherwise the
// pass copies the value first; where the readers could still run after the
// copy writes (a loop body's result, an aliased output), it also orders
// them before it with control edges. Entry outputs that are parameters,
// constants or repeated get copies, so results never share a buffer with
// the caller's arrays or each other. Before inserting, same-layout copies
// without control edges are removed: the insertion adds back exactly those
// that are needed. Run last: it decides buffers the later stages use.
#ifndef UIR_PASSES_COPY_INSERTION_H_
#define UIR_PASSES_COPY_INSERTION_H_

#include "passes/pass.h"

namespace uir::passes {

class CopyInsertion : public HloPass {
 public:
  std::string_view name() const override { return "copy-insertion"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_COPY_INSERTION_H_
