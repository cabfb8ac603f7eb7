// The library arg-reduce: argmax and argmin along one dimension, the value
// and its index at once, described by numbers only (the Kernel Graph plans
// it from a variadic reduce of values and their iota whose reducer picks
// the extreme value, NaN first, the lower index on ties).
#ifndef UIR_RUNTIME_ARG_REDUCE_H_
#define UIR_RUNTIME_ARG_REDUCE_H_

#include <array>
#include <cstdint>
#include <string>

#include "support/primitive_type.h"

namespace uir::runtime {

// For each position o of the kept dimensions: over i in [0, size) of the
// reduced dimension, the first i whose value is NaN, or else the first
// whose value is the largest (smallest for argmin); its value and i go to
// the outputs. An empty reduced dimension gives the init value and index.
// Arrays are addressed by element strides. Values: pred, integers of any
// width, f32, f64, and narrow floats (widened to f32, exactly, for the
// fold).
struct ArgReducePlan {
  static constexpr int kMaxKept = 7;
  using Dims = std::array<int64_t, kMaxKept>;
  PrimitiveType value_type = PrimitiveType::kF32;
  PrimitiveType index_type = PrimitiveType::kS32;
  bool max = true;                  // argmax, else argmin
  int64_t size = 0, in_stride = 0;  // the reduced dimension
  int kept = 0;
  Dims kept_size{}, kept_in{}, kept_value_out{}, kept_index_out{};

  int64_t InputElements() const;
  int64_t OutputElements(bool index) const;
  std::string Invalid() const;
  // "argmax f32 -> s32 [64x(4096)]": kept sizes with the reduced one in
  // parentheses.
  std::string ToString() const;
};

// Runs `plan`. `init_value` and `init_index` point at one element each.
void RunArgReduce(const ArgReducePlan& plan, const void* in, const void* init_value,
                  const void* init_index, void* out_value, void* out_index);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_ARG_REDUCE_H_
