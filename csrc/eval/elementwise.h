// Evaluation of elementwise instructions: unary, binary and ternary ops,
// compare, convert, and the complex/real conversions.
#ifndef UIR_EVAL_ELEMENTWISE_H_
#define UIR_EVAL_ELEMENTWISE_H_

#include <string>
#include <vector>

#include "eval/kernels.h"
#include "hlo/instruction.h"

namespace uir::eval {

// Evaluates `inst` (an elementwise opcode, convert, compare, select, clamp,
// complex, real, imag, is-finite, reduce-precision, copy) on `operands`.
hlo::Literal EvalElementwise(const hlo::HloInstruction& inst,
                             const std::vector<const hlo::Literal*>& operands);

// Converts `in` to `type` with XLA's rules: float -> int saturates and NaN
// becomes 0; to narrow floats rounds to nearest even; complex -> real keeps
// the real part; anything -> pred is "!= 0".
// compare's `direction` attribute (EQ, NE, GE, GT, LE, LT).
Direction DirectionOf(const hlo::HloInstruction& compare);

hlo::Literal Convert(const hlo::Literal& in, hlo::PrimitiveType type);

}  // namespace uir::eval

#endif  // UIR_EVAL_ELEMENTWISE_H_
