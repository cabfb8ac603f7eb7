// Evaluation of scatter and select-and-scatter.
#ifndef UIR_EVAL_SCATTER_H_
#define UIR_EVAL_SCATTER_H_

#include <vector>

#include "eval/context.h"
#include "hlo/instruction.h"

namespace uir::eval {

hlo::Literal EvalScatter(const hlo::HloInstruction& inst,
                         const std::vector<const hlo::Literal*>& operands, Context& ctx);

hlo::Literal EvalSelectAndScatter(const hlo::HloInstruction& inst,
                                  const std::vector<const hlo::Literal*>& operands, Context& ctx);

}  // namespace uir::eval

#endif  // UIR_EVAL_SCATTER_H_
