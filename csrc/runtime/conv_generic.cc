#include "runtime/conv_generic.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/dot.h"
#include "runtime/fold.h"
#include "runtime/narrow_float.h"
#include "support/float_format.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

using P = PrimitiveType;

template <typename T>
T LoadAs(const uint8_t* at) {
  T v;
  std::memcpy(&v, at, sizeof(T));
  return v;
}

// Element i of an array of `type` in the compute type C.
template <typename C>
C ValueAt(P type, const uint8_t* base, int64_t i) {
  const uint8_t* at = base + i * StorageBytes(type);
  if constexpr (IsComplexType<C>::value) {
    using R = typename C::value_type;
    if (type == P::kC64) return C(LoadAs<std::complex<float>>(at));
    if (type == P::kC128) return C(LoadAs<std::complex<double>>(at));
    return C(ValueAt<R>(type, base, i), R(0));
  } else if constexpr (std::is_floating_point_v<C>) {
    if (type == P::kF32) return static_cast<C>(LoadAs<float>(at));
    if (type == P::kF64) return static_cast<C>(LoadAs<double>(at));
    if (IsNarrowFloat(type)) {
      float wide = 0;
      WidenToF32(type, at, 1, &wide);
      return static_cast<C>(wide);
    }
  }
  // Integers and pred: sign- or zero-extended (sub-byte ones from their
  // low bits), then as C (modulo 2^64 for the unsigned words).
  if (BitWidth(type) < 8 && type != P::kPred) {
    const uint8_t byte = SubByteValue(type, *at);
    return static_cast<C>(IsSigned(type) ? int64_t{static_cast<int8_t>(byte)} : int64_t{byte});
  }
  switch (type) {
    case P::kPred:
    case P::kU8:
      return static_cast<C>(*at);
    case P::kU16:
      return static_cast<C>(LoadAs<uint16_t>(at));
    case P::kU32:
      return static_cast<C>(LoadAs<uint32_t>(at));
    case P::kU64:
      return static_cast<C>(LoadAs<uint64_t>(at));
    case P::kS8:
      return static_cast<C>(LoadAs<int8_t>(at));
    case P::kS16:
      return static_cast<C>(LoadAs<int16_t>(at));
    case P::kS32:
      return static_cast<C>(LoadAs<int32_t>(at));
    case P::kS64:
      return static_cast<C>(LoadAs<int64_t>(at));
    default:
      return C{};
  }
}

template <typename C>
std::vector<C> Widen(P type, const void* src, int64_t count) {
  std::vector<C> out(static_cast<size_t>(count));
  const auto* base = static_cast<const uint8_t*>(src);
  ParallelFor(count, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[static_cast<size_t>(i)] = ValueAt<C>(type, base, i);
  });
  return out;
}

// `v` written as element i of an array of `type`.
template <typename C>
void Store(P type, uint8_t* base, int64_t i, C v) {
  const int64_t bytes = StorageBytes(type);
  uint8_t* at = base + i * bytes;
  if constexpr (IsComplexType<C>::value) {
    if (type == P::kC64) {
      const std::complex<float> c(v);
      std::memcpy(at, &c, sizeof(c));
    } else {
      const std::complex<double> c(v);
      std::memcpy(at, &c, sizeof(c));
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    if (type == P::kF64) {
      const auto d = static_cast<double>(v);
      std::memcpy(at, &d, 8);
    } else if (type == P::kF32) {
      const auto f = static_cast<float>(v);
      std::memcpy(at, &f, 4);
    } else {
      const auto f = static_cast<float>(v);
      NarrowFromF32(type, &f, 1, at);
    }
  } else {
    // The low bytes of the word: the result's wraparound; pred: nonzero.
    const uint64_t w = type == P::kPred ? uint64_t{v != 0} : static_cast<uint64_t>(v);
    std::memcpy(at, &w, static_cast<size_t>(bytes));
  }
}

template <typename C>
void Run(const ConvPlan& p, P in_type, P kernel_type, P out_type, const void* input,
         const void* kernel, void* out_v) {
  const std::vector<C> in = Widen<C>(in_type, input, p.InputElements());
  const std::vector<C> k = Widen<C>(kernel_type, kernel, p.KernelElements());
  auto* out = static_cast<uint8_t*>(out_v);
  int64_t positions = 1, window_positions = 1;
  for (int d = 0; d < p.spatial; ++d) {
    positions *= p.out_size[static_cast<size_t>(d)];
    window_positions *= p.window[static_cast<size_t>(d)];
  }
  const int64_t features = p.groups * p.out_features;
  const int64_t total = p.batch * features * positions;
  const int64_t work = std::max<int64_t>(1, window_positions * p.in_features);
  ParallelFor(total, std::max<int64_t>(1, (1 << 14) / work), [&](int64_t begin, int64_t end) {
    std::array<int64_t, ConvPlan::kMaxSpatial> o{}, w{};
    for (int64_t e = begin; e < end; ++e) {
      int64_t rest = e;
      for (int d = p.spatial - 1; d >= 0; --d) {
        const auto s = static_cast<size_t>(d);
        o[s] = rest % p.out_size[s];
        rest /= p.out_size[s];
      }
      const int64_t feature = rest % features, b = rest / features;
      const int64_t g = feature / p.out_features;
      int64_t out_at = b * p.out_batch + feature * p.out_feature;
      for (int d = 0; d < p.spatial; ++d) {
        out_at += o[static_cast<size_t>(d)] * p.out_spatial[static_cast<size_t>(d)];
      }
      C acc{};
      for (int64_t kw = 0; kw < window_positions; ++kw) {
        int64_t r = kw, in_at = b * p.in_batch + g * p.in_features * p.in_feature;
        int64_t k_at = feature * p.kernel_out;
        bool inside = true;
        for (int d = p.spatial - 1; d >= 0; --d) {
          const auto s = static_cast<size_t>(d);
          w[s] = r % p.window[s];
          r /= p.window[s];
        }
        for (int d = 0; d < p.spatial && inside; ++d) {
          const auto s = static_cast<size_t>(d);
          const int64_t pos = o[s] * p.stride[s] + w[s] * p.window_dilation[s] - p.pad_low[s];
          inside =
              pos >= 0 && pos % p.base_dilation[s] == 0 && pos / p.base_dilation[s] < p.in_size[s];
          in_at += pos / p.base_dilation[s] * p.in_spatial[s];
          k_at += (p.reversed[s] ? p.window[s] - 1 - w[s] : w[s]) * p.kernel_spatial[s];
        }
        if (!inside) continue;
        for (int64_t i = 0; i < p.in_features; ++i) {
          acc += in[static_cast<size_t>(in_at + i * p.in_feature)] *
                 k[static_cast<size_t>(k_at + i * p.kernel_in)];
        }
      }
      Store<C>(out_type, out, out_at, acc);
    }
  });
}

}  // namespace

bool ConvTypesSupported(P input, P kernel, P out) { return DotTypesSupported(input, kernel, out); }

void RunConvGeneric(const ConvPlan& plan, P input_type, P kernel_type, P out_type,
                    const void* input, const void* kernel, void* out) {
  if (out_type == P::kC128) {
    Run<std::complex<double>>(plan, input_type, kernel_type, out_type, input, kernel, out);
  } else if (out_type == P::kC64) {
    Run<std::complex<float>>(plan, input_type, kernel_type, out_type, input, kernel, out);
  } else if (out_type == P::kF64) {
    Run<double>(plan, input_type, kernel_type, out_type, input, kernel, out);
  } else if (IsFloat(out_type)) {
    Run<float>(plan, input_type, kernel_type, out_type, input, kernel, out);
  } else {
    Run<uint64_t>(plan, input_type, kernel_type, out_type, input, kernel, out);
  }
}

}  // namespace uir::runtime
