// The batch-norm ops for the evaluator.
#ifndef UIR_EVAL_BATCH_NORM_H_
#define UIR_EVAL_BATCH_NORM_H_

#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::eval {

// batch-norm-{inference,training,grad}: statistics over every dimension but
// feature_index.
hlo::Literal BatchNorm(const hlo::HloInstruction& inst,
                       const std::vector<const hlo::Literal*>& ops);

}  // namespace uir::eval

#endif  // UIR_EVAL_BATCH_NORM_H_
