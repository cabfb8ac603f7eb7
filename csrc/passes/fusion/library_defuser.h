// library-defuser: inlines each fusion that holds an op the CPU backend
// runs as a library call or a loop of the runtime's own (dot, convolution,
// reduce-window, select-and-scatter, sort, gather, scatter, fft, custom
// call, variadic reduce), so that this pipeline's own fusion passes decide
// how it meets its neighbours.
//
// Modules written for another backend arrive fused for it: a Triton GEMM
// with its operand conversions inside, a YNN fusion of a lone dot, a GPU
// loop fusion around a prefix sum. The CPU backend runs such an op on
// buffers, with at most an elementwise epilogue after a dot or
// convolution, so these fusions are taken apart (their instructions
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
