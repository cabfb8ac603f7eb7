// Evaluation of scatter and select-and-scatter.
#ifndef UIR_EVAL_SCATTER_H_
#define UIR_EVAL_SCATTER_H_

#include <vector>

#include "eval/context.h"
#include "hlo/instruction.h"

namespace uir::eval {

// With `target`, a single-operand scatter writes into it in place of a copy
// of operand 0 (the caller owns it and no one else sees it).
hlo::Literal EvalScatter(const hlo::HloInstruction& inst,
                         const std::vector<const hlo::Literal*>& operands, Context& ctx,
                         hlo::Literal* target = nullptr);

// A single-operand scatter of an element type with a native C++ type
// (not a narrow float, not complex) whose combiner assigns or is add, mul,
// max, min, and or or: what ScatterBuffers runs.
bool CanScatterBuffers(const hlo::HloInstruction& inst);

// Such a scatter on row-major buffers: `out` receives the operand (unless
// it is the operand's memory: in place) with the updates combined in, in
// XLA's order; windows reaching outside the operand are skipped.
void ScatterBuffers(const hlo::HloInstruction& inst, const uint8_t* operand, const uint8_t* indices,
                    const uint8_t* updates, uint8_t* out);

hlo::Literal EvalSelectAndScatter(const hlo::HloInstruction& inst,
                                  const std::vector<const hlo::Literal*>& operands, Context& ctx);

}  // namespace uir::eval

#endif  // UIR_EVAL_SCATTER_H_
