// tuple-simplifier: get-tuple-element of a tuple becomes the element, and a
// tuple rebuilt from all the elements of one value, in order, becomes that
// value. Safe anywhere; leaves the dead tuples to dce.
#ifndef UIR_PASSES_TUPLE_SIMPLIFIER_H_
#define UIR_PASSES_TUPLE_SIMPLIFIER_H_

#include "passes/pass.h"

namespace uir::passes {

class TupleSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_TUPLE_SIMPLIFIER_H_
