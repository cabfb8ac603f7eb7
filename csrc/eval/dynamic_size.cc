// get-dimension-size, set-dimension-size and dynamic-reshape for the
// evaluator: dynamic arrays are kept at their actual size.
#include "eval/dynamic_size.h"

#include <cmath>
#include <vector>

#include "eval/elementwise.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "support/error.h"

namespace uir::eval {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

Literal EvalDynamicSize(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  switch (inst.opcode()) {
    case HloOpcode::kGetDimensionSize: {
      // Dynamic arrays are kept at their actual size (see FitsShape).
      Literal out = MakeLiteral(inst.shape().element_type(), {});
      out.SetInt64(0, ops[0]->shape().dimensions()[inst.attributes().Get<std::vector<int64_t>>(
                          AttrKey::kDimensions)[0]]);
      return out;
    }
    case HloOpcode::kSetDimensionSize: {
      // The first `size` entries along the dimension; entries beyond the
      // operand's own size are padding, which XLA leaves unspecified (zero here).
      const int64_t d = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions)[0];
      const int64_t size = ops[1]->GetInt64(0), bound = inst.shape().dimensions(d);
      if (size < 0 || size > bound) {
        throw ShapeError("set-dimension-size %" + inst.name() + " sets dimension " +
                         std::to_string(d) + " to " + std::to_string(size) +
                         ", outside its bound [0, " + std::to_string(bound) + "]");
      }
      std::vector<int64_t> dims = ops[0]->shape().dimensions();
      dims[d] = size;
      return Resized(*ops[0], dims);
    }
    case HloOpcode::kDynamicReshape: {
      // The operand's elements in row-major order under the sizes its
      // operands 1.. give, each within its dimension's bound.
      std::vector<int64_t> dims;
      int64_t count = 1;
      for (int64_t i = 0; i < inst.shape().rank(); ++i) {
        const int64_t size = ops[1 + i]->GetInt64(0), bound = inst.shape().dimensions(i);
        if (size < 0 || size > bound || (size != bound && !inst.shape().is_dynamic_dimension(i))) {
          throw ShapeError("dynamic-reshape %" + inst.name() + " gives dimension " +
                           std::to_string(i) + " the size " + std::to_string(size) +
                           (inst.shape().is_dynamic_dimension(i) ? ", outside its bound "
                                                                 : ", but it is static at ") +
                           std::to_string(bound));
        }
        dims.push_back(size);
        count *= size;
      }
      if (count != ops[0]->element_count()) {
        throw ShapeError("dynamic-reshape %" + inst.name() + " reshapes " +
                         std::to_string(ops[0]->element_count()) + " elements to " +
                         std::to_string(count));
      }
      return Reshaped(*ops[0], dims);
    }
    default:
      break;
  }
  throw InternalError("EvalDynamicSize called on " + std::string(hlo::OpcodeName(inst.opcode())));
}

}  // namespace uir::eval
