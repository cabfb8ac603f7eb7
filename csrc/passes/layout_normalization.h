// layout-normalization: every op computes in the default layout.
//
// A value of logical shape S laid out as L is, in memory, a default-layout
// array of S's dimensions in L's major-to-minor order (its physical shape);
// a `bitcast` between the two costs nothing. After layout-assignment, this
// pass rewrites each op that reads or writes a non-default layout to work on
// physical shapes, so later stages only ever see default layouts:
// elementwise ops run on the physical shape; copies and transposes become
// the physical transpose they are (a bitcast when that is the identity);
// broadcasts and reductions get their dimensions renumbered (with a
// transpose where the order must change); a reshape becomes transpose,
// bitcast, transpose (the reshape decomposer); other array ops run in the
// default layout between transposes. Results are bitcast back to their
// logical shape and layout for their readers, and bitcast chains collapse.
// A reshape between default layouts, a physical no-op, becomes a bitcast.
// Shapes with tiled or other extended layouts, parameters, tuples, dots
// and convolutions (library calls that read their layouts directly), and
// ops that call computations keep their layouts.
#ifndef UIR_PASSES_LAYOUT_NORMALIZATION_H_
#define UIR_PASSES_LAYOUT_NORMALIZATION_H_

#include "passes/pass.h"

namespace uir::passes {

class LayoutNormalization : public HloPass {
 public:
  std::string_view name() const override { return "layout-normalization"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_LAYOUT_NORMALIZATION_H_
