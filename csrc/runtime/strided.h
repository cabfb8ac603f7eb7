// Small helpers of the runtime's library loops over strided arrays: the
// elements an array spans and an index of any integer type read as int64.
#ifndef UIR_RUNTIME_STRIDED_H_
#define UIR_RUNTIME_STRIDED_H_

#include <array>
#include <cstdint>
#include <cstring>

#include "support/primitive_type.h"

namespace uir::runtime {

// The elements an array of `rank` dimensions spans: its largest offset
// plus one, 0 when any dimension is empty.
template <size_t N>
int64_t SpannedElements(const std::array<int64_t, N>& size, const std::array<int64_t, N>& stride,
                        int rank) {
  int64_t last = 0;
  for (int d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (size[k] == 0) return 0;
    last += (size[k] - 1) * stride[k];
  }
  return last + 1;
}

// The index of integer type `t` at `p` (u64 past int64's range saturates).
inline int64_t ReadIndex(PrimitiveType t, const uint8_t* p) {
  using P = PrimitiveType;
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (t) {
    case P::kS8:
      return load(int8_t{});
    case P::kS16:
      return load(int16_t{});
    case P::kS32:
      return load(int32_t{});
    case P::kS64:
      return load(int64_t{});
    case P::kU8:
      return load(uint8_t{});
    case P::kU16:
      return load(uint16_t{});
    case P::kU32:
      return load(uint32_t{});
    case P::kU64: {
      const uint64_t v = load(uint64_t{});
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
    default:
      return 0;
  }
}

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_STRIDED_H_
