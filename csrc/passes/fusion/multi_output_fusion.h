// multi-output-fusion: sibling fusion, one kernel reading a shared input once.
//
// Two fusible consumers of the same operand (fusions or single fusible ops,
// neither a dot epilogue nor a row fusion) that iterate over the same space
// merge into one fusion whose root is a tuple of both results; their users
// read them through get-tuple-element. Same space means: loop fusions with
// equal output dimensions, reductions of the same shape over the same
// dimensions, or a reduction and a loop fusion over the reduction's input
// shape. The shared operand is then read once instead of twice. Merging
// never forms a cycle: a pair where one reaches the other is skipped. The
// fused computation is CSE'd afterwards (the two bodies often share work).
// Runs where priority-fusion runs, after it.
#ifndef UIR_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
#define UIR_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_

#include "passes/pass.h"

namespace uir::passes {

class MultiOutputFusion : public HloPass {
 public:
  std::string_view name() const override { return "multi-output-fusion"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_FUSION_MULTI_OUTPUT_FUSION_H_
