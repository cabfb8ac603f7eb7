// What the library planners evaluate reducers and sort comparators with
// (library_plans.cc defines it; sort_plans.cc uses it too): scalars of a
// few classes of values, each op of a pick between them, and the total
// order of doubles.
#ifndef UIR_CODEGEN_PLAN_SCALARS_H_
#define UIR_CODEGEN_PLAN_SCALARS_H_

#include <cstdint>
#include <map>
#include <vector>

#include "hlo/instruction.h"

namespace uir::codegen {

// A double's place in the total order (-NaN < -inf < ... < -0 < +0 < ...
// < inf < NaN), as a signed integer small enough for a double to hold.
int64_t TotalOrderKey(double v);

// A scalar of a reducer's or comparator's evaluation: a number (as double,
// exact for the small values the classes use) or a truth value.
struct Scalar {
  double number = 0;
  double imag = 0;  // a complex value's imaginary part
  bool truth = false;
};

// Evaluates `inst` of a computation whose parameters take `params`, for
// the ops a pick between two pairs is built from (compares, logic, select,
// tuple); false where it meets anything else. `out` gets the root's
// elements.
bool EvalPick(const hlo::HloInstruction* inst, const std::vector<Scalar>& params,
              std::map<const hlo::HloInstruction*, std::vector<Scalar>>& memo,
              std::vector<Scalar>& out);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_PLAN_SCALARS_H_
