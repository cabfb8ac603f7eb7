// The ops that read or set dynamic dimension sizes, for the evaluator.
#ifndef UIR_EVAL_DYNAMIC_SIZE_H_
#define UIR_EVAL_DYNAMIC_SIZE_H_

#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::eval {

// get-dimension-size, set-dimension-size, dynamic-reshape.
hlo::Literal EvalDynamicSize(const hlo::HloInstruction& inst,
                             const std::vector<const hlo::Literal*>& ops);

}  // namespace uir::eval

#endif  // UIR_EVAL_DYNAMIC_SIZE_H_
