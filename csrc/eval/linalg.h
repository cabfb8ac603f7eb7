// Evaluation of cholesky, triangular-solve and topk here, and of fft,
// batch-norm-{inference,training,grad}, get-dimension-size,
// set-dimension-size and dynamic-reshape through fft.h, batch_norm.h and
// dynamic_size.h.
#ifndef UIR_EVAL_LINALG_H_
#define UIR_EVAL_LINALG_H_

#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

hlo::Literal EvalLinalgOp(const hlo::HloInstruction& inst,
                          const std::vector<const hlo::Literal*>& operands);

}  // namespace uir::eval

#endif  // UIR_EVAL_LINALG_H_
