// map, reduce and reduce-window for the evaluator.
#ifndef UIR_EVAL_REDUCE_H_
#define UIR_EVAL_REDUCE_H_

#include <vector>

#include "eval/context.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::eval {

// `inst`'s result from its operand arrays; `ctx` runs its computation.
hlo::Literal Map(Context& ctx, const hlo::HloInstruction& inst,
                 const std::vector<const hlo::Literal*>& ops);
hlo::Literal Reduce(Context& ctx, const hlo::HloInstruction& inst,
                    const std::vector<const hlo::Literal*>& ops);
hlo::Literal ReduceWindow(Context& ctx, const hlo::HloInstruction& inst,
                          const std::vector<const hlo::Literal*>& ops);

// A one-input reduce-window of a native C++ element type (not a narrow
// float, not complex) whose reducer is add, mul, max, min, and or or on row-major buffers (`init`
// the scalar), folding each window in row-major order as the evaluator does.
void ReduceWindowBuffers(const hlo::HloInstruction& inst, const uint8_t* in, const uint8_t* init,
                         uint8_t* out);

}  // namespace uir::eval

#endif  // UIR_EVAL_REDUCE_H_
