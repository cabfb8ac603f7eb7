// custom-call on the evaluator: the instruction's operands and result as a
// runtime call frame over literals, run through the custom-call registry.
#ifndef UIR_EVAL_CUSTOM_CALL_H_
#define UIR_EVAL_CUSTOM_CALL_H_

#include <optional>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "support/custom_call.h"

namespace uir::eval {

// Runs custom-call `call` on `operands` through its registered target; the
// result starts zero-filled in the call's shape (a buffer shape b(T) gives
// a T). Throws CustomCallError when no target is registered or it fails.
hlo::Literal RunCustomCall(const hlo::HloInstruction& call,
                           const std::vector<const hlo::Literal*>& operands);

// The calling convention custom-call `call`'s api_version names, if it has
// one.
std::optional<CustomCallApi> CustomCallApiOf(const hlo::HloInstruction& call);

}  // namespace uir::eval

#endif  // UIR_EVAL_CUSTOM_CALL_H_
