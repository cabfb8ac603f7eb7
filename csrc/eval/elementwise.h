// Evaluation of elementwise instructions: unary, binary and ternary ops,
// compare, convert, and the complex/real conversions.
#ifndef UIR_EVAL_ELEMENTWISE_H_
#define UIR_EVAL_ELEMENTWISE_H_

#include <string>
#include <string_view>
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

hlo::Literal Convert(const hlo::Literal& in, PrimitiveType type);

// The elementwise semantics without an instruction (the iGraph interpreter
// runs them): `op` a unary or binary opcode, operands of one shape and
// type; narrow floats go through f32 and round after the op. `what` names
// the operation in the error raised when `op` does not apply to the type.
hlo::Literal ApplyUnary(hlo::HloOpcode op, const hlo::Literal& x, std::string_view what);
hlo::Literal ApplyBinary(hlo::HloOpcode op, const hlo::Literal& x, const hlo::Literal& y,
                         std::string_view what);
// `total`: floats in XLA's total order (-NaN < -inf < -0 < +0 < inf < NaN).
hlo::Literal ApplyCompare(Direction direction, const hlo::Literal& x, const hlo::Literal& y,
                          bool total = false);
hlo::Literal ApplySelect(const hlo::Literal& pred, const hlo::Literal& on_true,
                         const hlo::Literal& on_false);

}  // namespace uir::eval

#endif  // UIR_EVAL_ELEMENTWISE_H_
