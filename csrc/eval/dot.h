// dot for the evaluator.
#ifndef UIR_EVAL_DOT_H_
#define UIR_EVAL_DOT_H_

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::eval {

// dot(lhs, rhs) with `inst`'s dimension numbers and result type.
hlo::Literal Dot(const hlo::HloInstruction& inst, const hlo::Literal& lhs, const hlo::Literal& rhs);

}  // namespace uir::eval

#endif  // UIR_EVAL_DOT_H_
