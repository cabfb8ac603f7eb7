// Narrow floats (bf16, f16, the f8 types) widened to f32 for a library
// routine and rounded back: how GEMM and convolution thunks run them.
#ifndef UIR_RUNTIME_NARROW_FLOAT_H_
#define UIR_RUNTIME_NARROW_FLOAT_H_

#include <cstdint>

#include "hlo/primitive_type.h"

namespace uir::runtime {

// `count` elements of narrow float `type` at `in` as f32 (exact).
void WidenToF32(hlo::PrimitiveType type, const void* in, int64_t count, float* out);
// `count` f32 values rounded to `type` (to nearest, ties to even).
void NarrowFromF32(hlo::PrimitiveType type, const float* in, int64_t count, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_NARROW_FLOAT_H_
