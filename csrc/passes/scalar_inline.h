// Scalar computations (a map's function, a reducer) written out as the same
// elementwise arithmetic on whole arrays: shared by map-inliner and
// reduce-expander.
#ifndef UIR_PASSES_SCALAR_INLINE_H_
#define UIR_PASSES_SCALAR_INLINE_H_

#include <vector>

#include "hlo/module.h"

namespace uir::passes {

// Whether every instruction of `f` works on scalars, one element at a time
// (parameters, constants, elementwise ops); with `tuple_root`, the root may
// also be a tuple of such scalars (a variadic reducer's).
bool IsScalarElementwise(const hlo::HloComputation& f, bool tuple_root = false);

// `f` (IsScalarElementwise) cloned into `caller` at the dimensions and
// layout of `like`: parameter k becomes args[k] (arrays of that shape),
// each scalar constant a broadcast, each op the same op on arrays of its
// own element type. Returns the root's value, or a tuple root's elements
// one by one.
std::vector<hlo::HloInstruction*> InlineScalar(const hlo::HloComputation& f,
                                               const std::vector<hlo::HloInstruction*>& args,
                                               const hlo::Shape& like, hlo::HloComputation* caller);

}  // namespace uir::passes

#endif  // UIR_PASSES_SCALAR_INLINE_H_
