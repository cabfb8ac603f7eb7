// layout-assignment: a physical layout for every array, copies where two disagree.
//
// Entry parameters take their layouts from entry_computation_layout (else
// they keep theirs, default when missing). Layouts then flow down in post
// order: an elementwise op takes the layout of its operands (the first
// operand of full rank decides; others that differ are copied to it);
// get-tuple-element and tuple pass layouts through; calls, fusions, while
// loops and conditionals take their callee's result layout and copy any
// operand whose layout differs from the callee's parameter; a dot reads its
// operands in a layout a BLAS call takes (row- or column-major for a plain
// matrix product, the default layout otherwise) and writes the default
// layout; custom calls follow their operand_layout_constraints; everything
// else keeps its layout (the default when it has none). Finally the entry
// result layout is pushed up: an elementwise producer used only by the
// root takes it (and passes it on to its operands), anything else gets a
// copy. Fused computations are left as they are. Layouts never change what
// a module computes: copy is the identity on values.
#ifndef UIR_PASSES_LAYOUT_ASSIGNMENT_H_
#define UIR_PASSES_LAYOUT_ASSIGNMENT_H_

#include <string>
#include <vector>

#include "passes/pass.h"

namespace uir::passes {

class LayoutAssignment : public HloPass {
 public:
  std::string_view name() const override { return "layout-assignment"; }
  bool Run(hlo::HloModule& module) override;
};

// Every place the module breaks the rules above (empty after the pass): an
// array without a layout, an elementwise operand in another layout, a dot
// operand a BLAS cannot take, a call boundary whose layouts differ, an
// entry result in another layout than entry_computation_layout says.
std::vector<std::string> LayoutProblems(const hlo::HloModule& module);

}  // namespace uir::passes

#endif  // UIR_PASSES_LAYOUT_ASSIGNMENT_H_
