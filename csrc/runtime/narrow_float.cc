// Widening and rounding narrow floats; bf16 by bit shifts, the rest through
// the HLO float formats.
#include "runtime/narrow_float.h"

#include <cstring>

#include "support/float_format.h"

namespace uir::runtime {

void WidenToF32(PrimitiveType type, const void* in, int64_t count, float* out) {
  if (type == PrimitiveType::kBF16) {
    const auto* bits = static_cast<const uint16_t*>(in);
    for (int64_t i = 0; i < count; ++i) {
      const uint32_t wide = static_cast<uint32_t>(bits[i]) << 16;
      std::memcpy(&out[i], &wide, sizeof(float));
    }
    return;
  }
  const int bytes = StorageBytes(type);
  const auto* at = static_cast<const uint8_t*>(in);
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, at + i * bytes, static_cast<size_t>(bytes));
    out[i] = DecodeNarrowFloat(type, bits);
  }
}

void NarrowFromF32(PrimitiveType type, const float* in, int64_t count, void* out) {
  if (type == PrimitiveType::kBF16) {
    auto* bits = static_cast<uint16_t*>(out);
    for (int64_t i = 0; i < count; ++i) {
      uint32_t wide;
      std::memcpy(&wide, &in[i], sizeof(float));
      if ((wide & 0x7fffffffu) > 0x7f800000u) {
        bits[i] = static_cast<uint16_t>((wide >> 16) | 0x40);  // a quiet NaN
      } else {
        wide += 0x7fffu + ((wide >> 16) & 1u);  // to nearest, ties to even
        bits[i] = static_cast<uint16_t>(wide >> 16);
      }
    }
    return;
  }
  const int bytes = StorageBytes(type);
  auto* at = static_cast<uint8_t*>(out);
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t bits = EncodeNarrowFloat(type, in[i]);
    std::memcpy(at + i * bytes, &bits, static_cast<size_t>(bytes));
  }
}

}  // namespace uir::runtime
