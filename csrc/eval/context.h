// What op implementations outside the evaluator's walk need from it:
// calling a computation, and calling a scalar computation on whole arrays.
#ifndef UIR_EVAL_CONTEXT_H_
#define UIR_EVAL_CONTEXT_H_

#include <optional>
#include <vector>

#include "hlo/computation.h"
#include "hlo/literal.h"

namespace uir::eval {

class Context {
 public:
  virtual ~Context() = default;

  // Runs `c` on `args`.
  virtual hlo::Literal Call(const hlo::HloComputation& c,
                            const std::vector<const hlo::Literal*>& args) = 0;

  // True when `c` takes scalars and computes only elementwise ops and scalar
  // constants (a tuple root allowed): then calling it on rank-1 arrays of N
  // elements computes N independent calls at once ("lifting").
  virtual bool Liftable(const hlo::HloComputation& c) = 0;

  // Calls a liftable `c` on rank-1 arrays of equal length; returns the value
  // of `value` (the root when null) over those arrays.
  virtual hlo::Literal CallLifted(const hlo::HloComputation& c,
                                  const std::vector<const hlo::Literal*>& args,
                                  const hlo::HloInstruction* value = nullptr) = 0;
};

// If `c` is `ROOT op(parameter(0), parameter(1))` for a commutative,
// associative op (add, multiply, maximum, minimum, and, or), that opcode:
// folds over it can run as typed loops.
std::optional<hlo::HloOpcode> SimpleReducer(const hlo::HloComputation& c);
// SimpleReducer's ops and xor: the reducers kernels fold with one op.
std::optional<hlo::HloOpcode> KernelFoldReducer(const hlo::HloComputation& c);

}  // namespace uir::eval

#endif  // UIR_EVAL_CONTEXT_H_
