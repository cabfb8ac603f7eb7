// Evaluation of sort.
#ifndef UIR_EVAL_SORT_H_
#define UIR_EVAL_SORT_H_

#include <vector>

#include "eval/context.h"
#include "hlo/instruction.h"

namespace uir::eval {

hlo::Literal EvalSort(const hlo::HloInstruction& inst,
                      const std::vector<const hlo::Literal*>& operands, Context& ctx);

}  // namespace uir::eval

#endif  // UIR_EVAL_SORT_H_
