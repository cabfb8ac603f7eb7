// library-defuser: inlines each fusion that holds a dot or a convolution,
// so that this pipeline's own fusion passes decide how the library op
// meets its neighbours.
//
// Modules written for another backend arrive fused for it: a Triton GEMM
// with its operand conversions inside, a YNN fusion of a lone dot, a
// loop fusion that computes a dot's operand in place. The CPU backend
// runs a library op as a call on buffers, with at most an elementwise
// epilogue after it, so such fusions are taken apart (their instructions
// cloned into the caller, parameters bound to the fusion's operands) and
// fused again by dot-chain-fusion and priority-fusion. Fusions with
// control edges and those wrapped by async work stay as they are. Run
// early, before simplification, so the inlined ops are simplified too.
#ifndef UIR_PASSES_FUSION_LIBRARY_DEFUSER_H_
#define UIR_PASSES_FUSION_LIBRARY_DEFUSER_H_

#include "passes/pass.h"

namespace uir::passes {

class LibraryDefuser : public HloPass {
 public:
  std::string_view name() const override { return "library-defuser"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_FUSION_LIBRARY_DEFUSER_H_
