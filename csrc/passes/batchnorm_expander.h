// batchnorm_expander: batch-norm-training, batch-norm-inference and
// batch-norm-grad rewritten as the reductions and elementwise arithmetic
// they stand for, as XLA:CPU expands them, so they fuse and compile like
// any other ops instead of running on the evaluator.
//
// Over every dimension but `feature_index` (N elements per feature):
//   training:  mean = sum(x) / N, var = sum((x - mean)^2) / N (two passes,
//              as the evaluator computes it: one pass of E[x^2] - E[x]^2
//              cancels for data far from zero), y = (x - mean) *
//              rsqrt(var + epsilon) * scale + offset; result (y, mean, var).
//   inference: y as above from the given mean and variance.
//   grad:      with xc = x - mean and r = rsqrt(var + epsilon):
//              grad_offset = sum(dy), grad_scale = sum(dy * xc) * r,
//              grad_x = scale * r * (dy - sum(dy) / N
//                                    - xc * sum(dy * xc) / N / (var + epsilon)).
// f16 and bf16 compute in f32 and round once at the end. Run early, with
// the other expansions, before layout assignment and fusion.
#ifndef UIR_PASSES_BATCHNORM_EXPANDER_H_
#define UIR_PASSES_BATCHNORM_EXPANDER_H_

#include "passes/pass.h"

namespace uir::passes {

class BatchNormExpander : public HloPass {
 public:
  std::string_view name() const override { return "batchnorm_expander"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_BATCHNORM_EXPANDER_H_
