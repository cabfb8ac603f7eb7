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

hlo::Literal EvalSelectAndScatter(const hlo::HloInstruction& inst,
                                  const std::vector<const hlo::Literal*>& operands, Context& ctx);

}  // namespace uir::eval

#endif  // UIR_EVAL_SCATTER_H_
