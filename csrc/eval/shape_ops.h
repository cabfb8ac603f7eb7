// Evaluation of data-movement ops: they copy elements, whatever their type.
#ifndef UIR_EVAL_SHAPE_OPS_H_
#define UIR_EVAL_SHAPE_OPS_H_

#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

// broadcast, reshape, bitcast, transpose, slice, concatenate, pad, reverse,
// iota, dynamic-slice, dynamic-update-slice, bitcast-convert, gather.
hlo::Literal EvalShapeOp(const hlo::HloInstruction& inst,
                         const std::vector<const hlo::Literal*>& operands);

// dynamic-update-slice writing into `target`, which stands for operand 0
// (the caller owns it and no one else sees it).
// gather on row-major buffers: `operand` and `indices` hold the
// instruction's operands, `out` receives its result. Start indices are
// clamped as XLA clamps them.
void GatherBuffers(const hlo::HloInstruction& inst, const uint8_t* operand, const uint8_t* indices,
                   uint8_t* out);

void DynamicUpdateSliceInto(hlo::Literal& target, const std::vector<const hlo::Literal*>& operands);

// Calls fn(index, linear) for every index of `dims` in row-major order.
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F&& fn) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(index, linear);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
}

}  // namespace uir::eval

#endif  // UIR_EVAL_SHAPE_OPS_H_
