// The reference evaluator: what every HLO program means. Passes and
// generated kernels are checked against it.
#ifndef UIR_EVAL_EVALUATOR_H_
#define UIR_EVAL_EVALUATOR_H_

#include <cstdint>
#include <vector>

#include "hlo/module.h"

namespace uir::eval {

// Verifies `module`, then runs its entry computation on `args`, one per entry parameter,
// each compatible with its parameter's shape (layouts aside; literals are
// row-major). Returns the root's value (a tuple literal for tuple roots).
// Throws ShapeError for wrong arguments (naming the parameter) and
// UnimplementedError for ops the evaluator does not support yet.
// rng ops draw deterministically from `seed`.
hlo::Literal Evaluate(const hlo::HloModule& module, const std::vector<hlo::Literal>& args,
                      uint64_t seed = 0);

struct EvaluateOptions {
  uint64_t seed = 0;
  // Evaluating more instructions than this (a loop that does not end, say)
  // stops with a ShapeError; 0 means no limit.
  int64_t max_steps = 0;
};
hlo::Literal Evaluate(const hlo::HloModule& module, const std::vector<hlo::Literal>& args,
                      const EvaluateOptions& options);

// Runs `module` as `participants` replicas (x partitions, flattened as
// replica * num_partitions + partition), each on its own thread with the
// same arguments; collectives exchange data between them. Returns each
// participant's result, in participant order.
std::vector<hlo::Literal> EvaluateReplicated(const hlo::HloModule& module,
                                             const std::vector<hlo::Literal>& args,
                                             int participants, uint64_t seed = 0);

// The same, each participant on its own arguments: per_participant[i] are
// participant i's (their count is the number of participants).
std::vector<hlo::Literal> EvaluateReplicated(
    const hlo::HloModule& module, const std::vector<std::vector<hlo::Literal>>& per_participant,
    uint64_t seed = 0);

// Runs one computation on argument literals.
hlo::Literal EvaluateComputation(const hlo::HloComputation& computation,
                                 const std::vector<const hlo::Literal*>& args);

// The same as participant `self` (collectives.h: its id, the partition
// count, the rng seed).
struct Participant;
hlo::Literal EvaluateComputation(const hlo::HloComputation& computation,
                                 const std::vector<const hlo::Literal*>& args,
                                 const Participant& self);

}  // namespace uir::eval

#endif  // UIR_EVAL_EVALUATOR_H_
