// dot-chain-fusion: a dot whose left operand is a row-local epilogue of
// another dot (analysis/dot_chain.h: attention's Q·Kᵀ, scaled softmax, ·V;
// an MLP's two layers around their activation) becomes one kOutput fusion
// holding both dots and the epilogue. The Kernel Graph runs such a fusion
// block of rows by block of rows (the first GEMM into a scratch block, the
// epilogue's iGraphs on it, the second GEMM into the output's rows), so the
// [M, N] intermediate, the largest value of attention, never reaches
// memory and needs no buffer.
//
// The default pipeline runs it before priority-fusion, on plain
// instructions, so that the second dot's own elementwise consumers (a
// residual add) stay outside for priority-fusion, and the fusion it makes is
// not fusible for the passes after it. It also accepts a chain spread over
// fusions (the first dot's kOutput fusion, the epilogue's kInput fusion,
// plain elementwise ops in between). The parts are fused into the second
// dot only when every one of them is used by the chain alone (no work is
// duplicated, no value outlives the fusion), and only when blocks
// pay (analysis::DotChainBlockRows with the machine's fast memory: the two dots'
// right operands are read again for every block, which an MLP's large
// weights make dearer than the intermediate). Runs on the computations
// priority-fusion works on.
#ifndef UIR_PASSES_FUSION_DOT_CHAIN_FUSION_H_
#define UIR_PASSES_FUSION_DOT_CHAIN_FUSION_H_

#include <string>
#include <vector>

#include "passes/pass.h"
#include "support/machine.h"

namespace uir::passes {

class DotChainFusion : public HloPass {
 public:
  explicit DotChainFusion(MachineModel machine = MachineModel::Host()) : machine_(machine) {}
  std::string_view name() const override { return "dot-chain-fusion"; }
  bool Run(hlo::HloModule& module) override;

  // The last Run's decisions, one line each: the fusion made, or the dot
  // left alone and why (only dots whose left operand is computed by a
  // fusion or an elementwise op).
  const std::vector<std::string>& decisions() const { return decisions_; }

 private:
  MachineModel machine_;
  std::vector<std::string> decisions_;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_FUSION_DOT_CHAIN_FUSION_H_
