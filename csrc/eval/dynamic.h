// Dynamic dimensions (<=N) in the evaluator. An array with a dynamic
// dimension is kept at its actual size (as an XLA literal with dynamic sizes
// reads); set-dimension-size cuts it, get-dimension-size reads it.
#ifndef UIR_EVAL_DYNAMIC_H_
#define UIR_EVAL_DYNAMIC_H_

#include <functional>
#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

// Evaluates one array op on operand literals.
using OpEvaluator = std::function<hlo::Literal(const hlo::HloInstruction&,
                                               const std::vector<const hlo::Literal*>&)>;

// Whether an operand array is smaller than its declared shape: a dynamic
// dimension below its bound.
bool HasShortOperand(const hlo::HloInstruction& inst, const std::vector<const hlo::Literal*>& ops);

// `inst` over operands of which some are below their bounds. Where the op's
// shape rule on the actual sizes gives a shape the declared one admits,
// `eval` runs it at those sizes: a reduce folds, a dot contracts, a
// concatenate joins and a pad surrounds only the valid entries, as XLA's
// dynamic padder arranges. A consumer whose result is static reads its
// operands at their bounds, the padding zero (XLA leaves padding
// unspecified). Otherwise a ShapeError (sizes that disagree) or an
// UnimplementedError names the op.
hlo::Literal EvalDynamic(const hlo::HloInstruction& inst,
                         const std::vector<const hlo::Literal*>& ops, const OpEvaluator& eval);

}  // namespace uir::eval

#endif  // UIR_EVAL_DYNAMIC_H_
