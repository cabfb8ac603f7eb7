// reduce-expander: reductions whose reducer is a computation of its own
// (not one add, multiply, maximum, minimum, and, or or xor of its two
// parameters) become levels of elementwise combines, so they compile like
// any other arithmetic instead of running on the evaluator.
//
// reduce(x, init), dimensions={d...}, to_apply=f, with f scalar
// elementwise arithmetic (a tuple root for a variadic reduce): the
// reduced dimensions move last and flatten to one, [K, R]; each level cuts
// R into up to 16 contiguous runs of m = ceil(R/16) (the tail padded with
// init) and folds them with f written out on [K, m] arrays, the first
// level from init (so every element is once the reducer's second argument,
// and rows of up to 16 fold in the evaluator's order); levels are kept
// apart by an optimization barrier, so each is one kernel that reads its
// input once; the last reshapes to the kept dimensions. Work stays
// O(K R); longer rows fold in a tree order, which HLO allows (a reducer is
// taken to be associative, and init its identity). Left alone: reducers that are one fold op
// (kernels reduce those; of complex values, only sums), argmax-style pairs of values and an iota
// along the one reduced dimension (the runtime's arg-reduce loop takes those), reducers with
// anything but scalar elementwise ops, and control dependences.
#ifndef UIR_PASSES_REDUCE_EXPANDER_H_
#define UIR_PASSES_REDUCE_EXPANDER_H_

#include "passes/pass.h"

namespace uir::passes {

class ReduceExpander : public HloPass {
 public:
  std::string_view name() const override { return "reduce-expander"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_REDUCE_EXPANDER_H_
