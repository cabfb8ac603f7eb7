// Evaluation of the linear-algebra, FFT, top-k, batch-norm and dynamic-size
// ops: cholesky, triangular-solve, fft, topk, batch-norm-{inference,
// training,grad}, get-dimension-size, set-dimension-size, dynamic-reshape.
#ifndef UIR_EVAL_LINALG_H_
#define UIR_EVAL_LINALG_H_

#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

hlo::Literal EvalLinalgOp(const hlo::HloInstruction& inst,
                          const std::vector<const hlo::Literal*>& operands);

}  // namespace uir::eval

#endif  // UIR_EVAL_LINALG_H_
