// Narrow floats (bf16, f16, the f8 types) widened to f32 for a library
// routine and rounded back: how GEMM and convolution thunks run them; and
// the values of integers of fewer than 8 bits, a byte each.
#ifndef UIR_RUNTIME_NARROW_FLOAT_H_
#define UIR_RUNTIME_NARROW_FLOAT_H_

#include <cstdint>
#include <memory>

#include "support/primitive_type.h"

namespace uir::runtime {

// `count` elements of narrow float `type` at `in` as f32 (exact).
void WidenToF32(PrimitiveType type, const void* in, int64_t count, float* out);
// `count` f32 values rounded to `type` (to nearest, ties to even).
void NarrowFromF32(PrimitiveType type, const float* in, int64_t count, void* out);

// An integer of fewer than 8 bits held in a byte, read from its low bits
// (the upper ones may be anything: NumPy's int4 keeps -1 as 0x0f) and
// returned as the byte of its value: sign-extended, or masked.
inline uint8_t SubByteValue(PrimitiveType type, uint8_t byte) {
  const int bits = BitWidth(type);
  const auto low = static_cast<uint8_t>(byte & ((1u << bits) - 1));
  if (!IsSigned(type)) return low;
  const auto sign = static_cast<uint8_t>(1u << (bits - 1));
  return static_cast<uint8_t>((low ^ sign) - sign);
}

// Runs `fn(a, b, out)` on f32 copies of two operands of narrow float
// `type` (`a_count` and `b_count` elements) and rounds the `out_count`
// results it writes into `out`. The copies are this call's own: a thread
// that waits inside `fn` may run other work meanwhile.
template <typename Fn>
void RunInF32(PrimitiveType type, const void* a, int64_t a_count, const void* b, int64_t b_count,
              void* out, int64_t out_count, Fn&& fn) {
  std::unique_ptr<float[]> wide(new float[static_cast<size_t>(a_count + b_count + out_count)]);
  WidenToF32(type, a, a_count, wide.get());
  WidenToF32(type, b, b_count, wide.get() + a_count);
  fn(wide.get(), wide.get() + a_count, wide.get() + a_count + b_count);
  NarrowFromF32(type, wide.get() + a_count + b_count, out_count, out);
}

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_NARROW_FLOAT_H_
