// Evaluation of convolution.
#ifndef UIR_EVAL_CONVOLUTION_H_
#define UIR_EVAL_CONVOLUTION_H_

#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

hlo::Literal EvalConvolution(const hlo::HloInstruction& inst, const hlo::Literal& lhs,
                             const hlo::Literal& rhs);

}  // namespace uir::eval

#endif  // UIR_EVAL_CONVOLUTION_H_
