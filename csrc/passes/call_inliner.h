// call-inliner: replaces each `call` by a copy of the computation it calls.
//
// The callee's instructions are cloned into the caller (parameters become
// the call's operands, names made unique) and the call's users read the
// cloned root. Calls with control edges are left alone. Computations no
// longer called are removed. Run early, before simplification, so the other
// passes see one flat graph.
#ifndef UIR_PASSES_CALL_INLINER_H_
#define UIR_PASSES_CALL_INLINER_H_

#include "passes/pass.h"

namespace uir::passes {

class CallInliner : public HloPass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  bool Run(hlo::HloModule& module) override;
};

// Clones `callee` into `caller` with its parameters bound to `arguments`;
// returns the clone of its root. Shared by inlining and fusion.
hlo::HloInstruction* InlineComputation(const hlo::HloComputation& callee,
                                       const std::vector<hlo::HloInstruction*>& arguments,
                                       hlo::HloComputation& caller);

}  // namespace uir::passes

#endif  // UIR_PASSES_CALL_INLINER_H_
