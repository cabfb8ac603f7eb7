// DataflowOrder: whether one instruction must come after another in every
// schedule of a computation (it reads it, directly or not, or is ordered
// after it by control edges).
#ifndef UIR_PASSES_DATAFLOW_ORDER_H_
#define UIR_PASSES_DATAFLOW_ORDER_H_

#include <cstdint>
#include <unordered_map>

#include "hlo/computation.h"

namespace uir::passes {

class DataflowOrder {
 public:
  explicit DataflowOrder(const hlo::HloComputation& computation) : c_(computation) { Renumber(); }

  // True if `a` != `b` and `a` depends on `b`. A search back from `a` that
  // skips instructions placed before `b` in post order (they cannot lead to
  // it); instructions added since the last Renumber are always searched.
  bool After(const hlo::HloInstruction* a, const hlo::HloInstruction* b);

  // The instruction's place in post order (as of the last Renumber; an
  // instruction added since triggers one).
  int64_t Position(const hlo::HloInstruction* instruction);

  // Recomputes post-order positions after the graph changed shape.
  void Renumber();

 private:
  const hlo::HloComputation& c_;
  std::unordered_map<const hlo::HloInstruction*, int64_t> position_;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_DATAFLOW_ORDER_H_
