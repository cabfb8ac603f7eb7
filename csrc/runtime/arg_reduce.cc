// The library arg-reduce. Along a contiguous reduced dimension each line
// is folded chunk by chunk by value alone (NaN-aware, in vector lanes, in
// an AVX2 or AVX-512 clone where the host has one), then the first index
// holding the extreme is found in the first chunk that reached it.
// Otherwise the line's best value and index are kept per element of a
// contiguous kept dimension (the loop over it vectorizes), or per line.
#include "runtime/arg_reduce.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/narrow_float.h"
#include "support/float_format.h"
#include "support/machine.h"
#include "support/thread_pool.h"

namespace uir::runtime {

namespace {

template <typename T>
inline bool IsNan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Whether `a` beats `b` (strictly) as the extreme of its kind: NaN beats
// every number.
template <typename T, bool Max>
inline bool Beats(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return false;
    if (std::isnan(a)) return true;
  }
  return Max ? a > b : a < b;
}

// Vectors of `Bytes` bytes of floats or doubles, with their masks, as
// GCC's and Clang's vector extensions spell them: 16 bytes, SSE, which
// every x86-64 host has, and 32 bytes for an AVX2 clone (one blend per
// select instead of three ops) chosen at run time.
template <typename T, int Bytes>
struct Vec;
template <>
struct Vec<float, 16> {
  using V = float __attribute__((vector_size(16)));
  using M = int32_t __attribute__((vector_size(16)));
};
template <>
struct Vec<double, 16> {
  using V = double __attribute__((vector_size(16)));
  using M = int64_t __attribute__((vector_size(16)));
};
template <>
struct Vec<float, 32> {
  using V = float __attribute__((vector_size(32)));
  using M = int32_t __attribute__((vector_size(32)));
};
template <>
struct Vec<double, 32> {
  using V = double __attribute__((vector_size(32)));
  using M = int64_t __attribute__((vector_size(32)));
};
template <>
struct Vec<float, 64> {
  using V = float __attribute__((vector_size(64)));
  using M = int32_t __attribute__((vector_size(64)));
};
template <>
struct Vec<double, 64> {
  using V = double __attribute__((vector_size(64)));
  using M = int64_t __attribute__((vector_size(64)));
};

// Whether any lane of a compare's mask is set.
template <typename M>
__attribute__((always_inline)) inline bool AnyLane(M m) {
  uint64_t words[sizeof(M) / 8];
  std::memcpy(words, &m, sizeof(M));
  uint64_t any = 0;
  for (uint64_t w : words) any |= w;
  return any != 0;
}

// The first i of x[0..n) (n >= 1, contiguous) holding the extreme value.
// Chunks of 512 are folded by lanes of a vector that keep only the best
// value each has seen (one compare and one select per vector); a chunk
// whose best beats every earlier chunk's strictly becomes the candidate,
// and the first element of it equal to the overall best is the answer:
// every earlier chunk holds only worse values. NaNs never enter the lanes
// (compares with them are false); they are noticed in running sums of the
// lanes, which a NaN makes NaN (as do infinities of both signs): only then
// is the line searched for its first NaN.
// A short line (k-means' few centres), one element at a time without
// branches: the first NaN, else the first strictly better value.
template <typename T, bool Max>
__attribute__((always_inline)) inline int64_t FirstExtremeShort(const T* x, int64_t n) {
  T best = x[0];
  int64_t at = 0;
  bool nan = IsNan(best);
  for (int64_t k = 1; k < n; ++k) {
    const T v = x[k];
    const bool take = !nan && (IsNan(v) || (Max ? v > best : v < best));
    best = take ? v : best;
    at = take ? k : at;
    nan = nan || IsNan(v);
  }
  return at;
}

// Lines too short for lanes of their own (k-means' few centres), one
// line per lane of a vector of `Bytes`: element k of each line gathered
// into one vector, then one compare and two selects per step for them
// all, the rule FirstExtremeShort applies to one line (the first NaN,
// else the first strictly better value). at[b] gets lane b's answer.
template <typename T, int Bytes>
constexpr int kLanes = Bytes / static_cast<int>(sizeof(T));
template <typename T, bool Max, int Bytes>
__attribute__((always_inline)) inline void FirstExtremesShort(const T* x, int64_t stride, int64_t n,
                                                              int64_t* at) {
  using V = typename Vec<T, Bytes>::V;
  using M = typename Vec<T, Bytes>::M;
  using Index = std::remove_reference_t<decltype(M{}[0])>;
  constexpr int kW = kLanes<T, Bytes>;
  V best;
  for (int b = 0; b < kW; ++b) best[b] = x[b * stride];
  M nan = best != best;
  M where = {};
  for (int64_t k = 1; k < n; ++k) {
    V v;
    for (int b = 0; b < kW; ++b) v[b] = x[b * stride + k];
    const M v_nan = v != v;
    const M take = ~nan & (v_nan | (Max ? v > best : v < best));
    best = take ? v : best;
    where = take ? M{} + static_cast<Index>(k) : where;
    nan |= v_nan;
  }
  for (int b = 0; b < kW; ++b) at[b] = where[b];
}

// Lines shorter than this fold element by element (FirstExtremeShort,
// FirstExtremesShort); longer ones in vector chunks (FirstExtremeOf).
constexpr int64_t kShortLine = 64;

// How far ahead FirstExtremeOf's chunks prefetch a long line. Argmax over
// the rows of 4096x4096 f32 beside a plain max (AVX2, 2 threads, one
// process each): none 1.21-1.40x of the max's time, 4 KiB ahead
// 1.10-1.19x, 8 KiB 0.96-1.03x, 16 KiB 1.00-1.13x.
constexpr int64_t kPrefetchAhead = 8192;

template <typename T, bool Max, int Bytes>
__attribute__((always_inline)) inline int64_t FirstExtremeOf(const T* x, int64_t n) {
  if (n < kShortLine) return FirstExtremeShort<T, Max>(x, n);
  T best = x[0];
  int64_t chunk_at = 0;  // the chunk that first holds `best`
  bool maybe_nan = false;
  int64_t i = 1;
  constexpr int64_t kChunk = 512;
  if constexpr (std::is_floating_point_v<T>) {
    using V = typename Vec<T, Bytes>::V;
    constexpr int kWidth = sizeof(V) / sizeof(T);
    // Short lines (k-means' few centres) go faster one element at a time:
    // setting up and folding the lanes costs more than it saves.
    if (n >= 16 * kWidth) {
      // Four sets of lanes: four independent chains of one max (min) per
      // vector, `v > lane ? v : lane` being exactly x86's maxps(v, lane)
      // (a NaN v leaves the lane as it was), and one add to the NaN check.
      constexpr int kSets = 4;
      V check[kSets] = {};
      for (i = 0; i + kChunk <= n; i += kChunk) {
        V lane[kSets], v;
        for (int r = 0; r < kSets; ++r) std::memcpy(&lane[r], x + i + r * kWidth, sizeof(V));
        for (int64_t k = i; k < i + kChunk; k += kSets * kWidth) {
          // A line at a time, kPrefetchAhead ahead: without, the fold
          // keeps fewer lines in flight than a plain max does.
          for (int64_t b = 0; b < kSets * kWidth * static_cast<int64_t>(sizeof(T)); b += 64) {
            __builtin_prefetch(reinterpret_cast<const char*>(x + k) + kPrefetchAhead + b);
          }
          for (int r = 0; r < kSets; ++r) {
            std::memcpy(&v, x + k + r * kWidth, sizeof(V));
            lane[r] = Max ? (v > lane[r] ? v : lane[r]) : (v < lane[r] ? v : lane[r]);
            check[r] += v;
          }
        }
        // The lane sets folded into one; a lane past the best so far
        // (one vector compare, its mask's words or-ed) is rare after the
        // first chunks, and only then are the lanes scanned.
        V top = lane[0];
        for (int r = 1; r < kSets; ++r) {
          top = Max ? (lane[r] > top ? lane[r] : top) : (lane[r] < top ? lane[r] : top);
        }
        V best_v;
        for (int j = 0; j < kWidth; ++j) best_v[j] = best;
        if (i == 0 || AnyLane(Max ? top > best_v : top < best_v)) {
          T chunk_best = top[0];
          for (int j = 1; j < kWidth; ++j) {
            if (Max ? top[j] > chunk_best : top[j] < chunk_best) chunk_best = top[j];
          }
          if (i == 0 || (Max ? chunk_best > best : chunk_best < best)) {
            best = chunk_best;
            chunk_at = i;
          }
        }
      }
      for (int r = 0; r < kSets; ++r) {
        for (int j = 0; j < kWidth; ++j) maybe_nan = maybe_nan || IsNan(check[r][j]);
      }
      // The tail is left to the loop below, which finds its own position.
      if (i == 0) i = 1;
    }
  }
  int64_t at = -1;
  maybe_nan = maybe_nan || IsNan(x[0]);
  for (int64_t k = i; k < n; ++k) {
    maybe_nan = maybe_nan || IsNan(x[k]);
    if (Max ? x[k] > best : x[k] < best) {
      best = x[k];
      at = k;
    }
  }
  if (maybe_nan) {
    for (int64_t k = 0; k < n; ++k) {
      if (IsNan(x[k])) return k;
    }
  }
  if (at >= 0) return at;  // the tail holds the best, strictly
  int64_t k = chunk_at;
  if constexpr (std::is_floating_point_v<T>) {
    // A vector at a time: the best is in the chunk, found where a lane
    // equals it.
    using V = typename Vec<T, Bytes>::V;
    constexpr int kWidth = sizeof(V) / sizeof(T);
    V best_v;
    for (int j = 0; j < kWidth; ++j) best_v[j] = best;
    for (; k + kWidth <= n; k += kWidth) {
      V v;
      std::memcpy(&v, x + k, sizeof(V));
      if (AnyLane(v == best_v)) break;
    }
  }
  for (; k < n; ++k) {
    if (x[k] == best) return k;
  }
  return 0;
}

#if defined(__x86_64__)
template <typename T, bool Max>
__attribute__((target("avx2"))) int64_t FirstExtremeAvx2(const T* x, int64_t n) {
  return FirstExtremeOf<T, Max, 32>(x, n);
}
template <typename T, bool Max>
__attribute__((target("avx512f"))) int64_t FirstExtremeAvx512(const T* x, int64_t n) {
  return FirstExtremeOf<T, Max, 64>(x, n);
}
#endif

#if defined(__x86_64__)
template <typename T, bool Max>
__attribute__((target("avx2"))) void FirstExtremesAvx2(const T* x, int64_t stride, int64_t n,
                                                       int64_t* at) {
  FirstExtremesShort<T, Max, 32>(x, stride, n, at);
}
#endif

// FirstExtremes takes kShortLanes<T> float or double lines of fewer
// than kShortLine elements at once.
template <typename T>
constexpr int kShortLanes = kLanes<T, 32>;
template <typename T, bool Max>
void FirstExtremes(const T* x, int64_t stride, int64_t n, int64_t* at) {
#if defined(__x86_64__)
  static const int64_t vector = MachineModel::Host().vector_bytes;
  if (vector >= 32) return FirstExtremesAvx2<T, Max>(x, stride, n, at);
#endif
  constexpr int kHalf = kLanes<T, 16>;
  FirstExtremesShort<T, Max, 16>(x, stride, n, at);
  FirstExtremesShort<T, Max, 16>(x + kHalf * stride, stride, n, at + kHalf);
}

template <typename T, bool Max>
int64_t FirstExtreme(const T* x, int64_t n) {
#if defined(__x86_64__)
  static const int64_t vector = MachineModel::Host().vector_bytes;
  if (vector >= 64) return FirstExtremeAvx512<T, Max>(x, n);
  if (vector >= 32) return FirstExtremeAvx2<T, Max>(x, n);
#endif
  return FirstExtremeOf<T, Max, 16>(x, n);
}

template <typename T, typename I, bool Max>
void Run(const ArgReducePlan& p, const T* in, T init_v, I init_i, T* out_v, I* out_i) {
  // The contiguous kept dimension walked as a row, if any.
  int row_dim = -1;
  if (p.in_stride != 1) {
    for (int d = p.kept - 1; d >= 0; --d) {
      const auto k = static_cast<size_t>(d);
      if (p.kept_in[k] == 1 && p.kept_value_out[k] == 1 && p.kept_index_out[k] == 1) {
        row_dim = d;
        break;
      }
    }
  }
  const int64_t row = row_dim >= 0 ? p.kept_size[static_cast<size_t>(row_dim)] : 1;
  std::vector<int> outer;
  int64_t lines = 1;
  for (int d = 0; d < p.kept; ++d) {
    if (d == row_dim) continue;
    outer.push_back(d);
    lines *= p.kept_size[static_cast<size_t>(d)];
  }
  const int64_t n = p.size;
  // The init folded in first, as the reducer folds it: the winner over
  // the line then meets it once.
  auto finish = [&](T v, int64_t i, T* ov, I* oi) {
    if (n == 0 || IsNan(init_v) || Beats<T, Max>(init_v, v) ||
        (init_v == v && static_cast<int64_t>(init_i) < i)) {
      *ov = init_v;
      *oi = init_i;
    } else {
      *ov = v;
      *oi = static_cast<I>(i);
    }
  };
  const int64_t grain = std::max<int64_t>(1, (1 << 13) / std::max<int64_t>(1, n * row));
  ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
    std::unique_ptr<T[]> best(new T[static_cast<size_t>(row)]);
    std::unique_ptr<int64_t[]> where(new int64_t[static_cast<size_t>(row)]);
    int64_t l = begin;
    if constexpr (std::is_floating_point_v<T>) {
      if (row_dim < 0 && outer.size() == 1 && p.in_stride == 1 && n > 1 && n < kShortLine) {
        // Short contiguous lines, side by side in vector lanes.
        constexpr int kLines = kShortLanes<T>;
        const auto d = static_cast<size_t>(outer[0]);
        for (; l + kLines <= end; l += kLines) {
          const T* x = in + l * p.kept_in[d];
          int64_t at[kLines];
          FirstExtremes<T, Max>(x, p.kept_in[d], n, at);
          for (int b = 0; b < kLines; ++b) {
            const int64_t m = l + b;
            finish(x[b * p.kept_in[d] + at[b]], at[b], out_v + m * p.kept_value_out[d],
                   out_i + m * p.kept_index_out[d]);
          }
        }
      }
    }
    for (; l < end; ++l) {
      int64_t in_off = 0, ov_off = 0, oi_off = 0, r = l;
      const bool one = outer.size() == 1;  // one walked dimension: no divisions
      if (one) {
        const auto d = static_cast<size_t>(outer[0]);
        in_off = l * p.kept_in[d];
        ov_off = l * p.kept_value_out[d];
        oi_off = l * p.kept_index_out[d];
      }
      for (size_t j = one ? 0 : outer.size(); j-- > 0;) {
        const auto d = static_cast<size_t>(outer[j]);
        const int64_t c = r % p.kept_size[d];
        r /= p.kept_size[d];
        in_off += c * p.kept_in[d];
        ov_off += c * p.kept_value_out[d];
        oi_off += c * p.kept_index_out[d];
      }
      const T* x = in + in_off;
      if (row_dim < 0) {
        int64_t at = 0;
        if (n > 0) {
          if (p.in_stride == 1) {
            at = FirstExtreme<T, Max>(x, n);
          } else {
            for (int64_t i = 1; i < n; ++i) {
              if (Beats<T, Max>(x[i * p.in_stride], x[at * p.in_stride])) at = i;
            }
          }
        }
        finish(n > 0 ? x[at * p.in_stride] : init_v, at, out_v + ov_off, out_i + oi_off);
        continue;
      }
      T* b = best.get();
      int64_t* w = where.get();
      if (n > 0) {
        for (int64_t j = 0; j < row; ++j) {
          b[j] = x[j];
          w[j] = 0;
        }
      }
      for (int64_t i = 1; i < n; ++i) {
        const T* xi = x + i * p.in_stride;
        for (int64_t j = 0; j < row; ++j) {
          const bool take = Beats<T, Max>(xi[j], b[j]);
          b[j] = take ? xi[j] : b[j];
          w[j] = take ? i : w[j];
        }
      }
      for (int64_t j = 0; j < row; ++j) {
        finish(n > 0 ? b[j] : init_v, n > 0 ? w[j] : 0, out_v + ov_off + j, out_i + oi_off + j);
      }
    }
  });
}

template <typename T, typename I>
void RunIndexed(const ArgReducePlan& p, const void* in, const void* iv, const void* ii, void* ov,
                void* oi) {
  T init_v;
  I init_i;
  std::memcpy(&init_v, iv, sizeof(T));
  std::memcpy(&init_i, ii, sizeof(I));
  if (p.max) {
    Run<T, I, true>(p, static_cast<const T*>(in), init_v, init_i, static_cast<T*>(ov),
                    static_cast<I*>(oi));
  } else {
    Run<T, I, false>(p, static_cast<const T*>(in), init_v, init_i, static_cast<T*>(ov),
                     static_cast<I*>(oi));
  }
}

template <typename T>
void RunValued(const ArgReducePlan& p, const void* in, const void* iv, const void* ii, void* ov,
               void* oi) {
  switch (p.index_type) {
    case PrimitiveType::kS32:
      return RunIndexed<T, int32_t>(p, in, iv, ii, ov, oi);
    case PrimitiveType::kS64:
      return RunIndexed<T, int64_t>(p, in, iv, ii, ov, oi);
    case PrimitiveType::kU32:
      return RunIndexed<T, uint32_t>(p, in, iv, ii, ov, oi);
    case PrimitiveType::kU64:
      return RunIndexed<T, uint64_t>(p, in, iv, ii, ov, oi);
    default:
      return;
  }
}

bool ValueTypeSupported(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::kF32:
    case P::kF64:
    case P::kS8:
    case P::kS16:
    case P::kS32:
    case P::kS64:
    case P::kU8:
    case P::kU16:
    case P::kU32:
    case P::kU64:
    case P::kPred:
    case P::kS2:
    case P::kS4:
    case P::kU2:
    case P::kU4:
      return true;
    default:
      return IsNarrowFloat(t);
  }
}

int64_t Span(const ArgReducePlan& p, const ArgReducePlan::Dims& strides, int64_t extra) {
  int64_t last = extra;
  for (int d = 0; d < p.kept; ++d) {
    const auto k = static_cast<size_t>(d);
    if (p.kept_size[k] == 0) return 0;
    last += (p.kept_size[k] - 1) * strides[k];
  }
  return last + 1;
}

}  // namespace

int64_t ArgReducePlan::InputElements() const {
  if (size == 0) return 0;
  return Span(*this, kept_in, (size - 1) * in_stride);
}

int64_t ArgReducePlan::OutputElements(bool index) const {
  return Span(*this, index ? kept_index_out : kept_value_out, 0);
}

std::string ArgReducePlan::Invalid() const {
  using P = PrimitiveType;
  if (!ValueTypeSupported(value_type)) {
    return "values of " + std::string(PrimitiveTypeName(value_type));
  }
  if (index_type != P::kS32 && index_type != P::kS64 && index_type != P::kU32 &&
      index_type != P::kU64) {
    return "indices of " + std::string(PrimitiveTypeName(index_type));
  }
  if (kept < 0 || kept > kMaxKept) return "kept rank " + std::to_string(kept);
  if (size < 0 || in_stride < 0) return "reduced dimension out of range";
  if (size > 0 && BitWidth(index_type) == 32 && size - 1 > INT32_MAX) {
    return "indices past 32 bits";
  }
  for (int d = 0; d < kept; ++d) {
    const auto k = static_cast<size_t>(d);
    if (kept_size[k] < 0 || kept_in[k] < 0 || kept_value_out[k] < 0 || kept_index_out[k] < 0) {
      return "kept dimension " + std::to_string(d) + " out of range";
    }
  }
  return "";
}

std::string ArgReducePlan::ToString() const {
  std::string s = std::string(max ? "argmax " : "argmin ") +
                  std::string(PrimitiveTypeName(value_type)) + " -> " +
                  std::string(PrimitiveTypeName(index_type)) + " [";
  for (int d = 0; d < kept; ++d) s += std::to_string(kept_size[static_cast<size_t>(d)]) + "x";
  return s + "(" + std::to_string(size) + ")]";
}

void RunArgReduce(const ArgReducePlan& p, const void* in, const void* init_value,
                  const void* init_index, void* out_value, void* out_index) {
  using P = PrimitiveType;
  if (IsNarrowFloat(p.value_type)) {
    // Narrow floats widened to f32 (exactly, NaNs and signed zeros kept),
    // reduced there, the winners rounded back (exactly: they were values
    // of the type).
    ArgReducePlan wide = p;
    wide.value_type = P::kF32;
    const int64_t n = p.InputElements(), m = p.OutputElements(false);
    std::unique_ptr<float[]> values(new float[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    std::unique_ptr<float[]> best(new float[static_cast<size_t>(std::max<int64_t>(m, 1))]);
    ParallelFor(n, 1 << 16, [&](int64_t begin, int64_t end) {
      WidenToF32(p.value_type, static_cast<const uint8_t*>(in) + begin * StorageBytes(p.value_type),
                 end - begin, values.get() + begin);
    });
    float init = 0;
    WidenToF32(p.value_type, init_value, 1, &init);
    RunValued<float>(wide, values.get(), &init, init_index, best.get(), out_index);
    NarrowFromF32(p.value_type, best.get(), m, out_value);
    return;
  }
  if (BitWidth(p.value_type) < 8 && p.value_type != P::kPred) {
    // Sub-byte integers read from their low bits into bytes of their
    // values (sign-extended, or masked), then reduced as bytes.
    const int64_t n = p.InputElements();
    std::unique_ptr<uint8_t[]> values(new uint8_t[static_cast<size_t>(std::max<int64_t>(n, 1))]);
    const auto* bytes = static_cast<const uint8_t*>(in);
    for (int64_t i = 0; i < n; ++i) values[i] = SubByteValue(p.value_type, bytes[i]);
    const uint8_t init = SubByteValue(p.value_type, *static_cast<const uint8_t*>(init_value));
    if (IsSigned(p.value_type)) {
      return RunValued<int8_t>(p, values.get(), &init, init_index, out_value, out_index);
    }
    return RunValued<uint8_t>(p, values.get(), &init, init_index, out_value, out_index);
  }
  switch (p.value_type) {
    case P::kPred:  // one byte each, 0 or 1
      return RunValued<uint8_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kF32:
      return RunValued<float>(p, in, init_value, init_index, out_value, out_index);
    case P::kF64:
      return RunValued<double>(p, in, init_value, init_index, out_value, out_index);
    case P::kS8:
      return RunValued<int8_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kS16:
      return RunValued<int16_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kS32:
      return RunValued<int32_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kS64:
      return RunValued<int64_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kU8:
      return RunValued<uint8_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kU16:
      return RunValued<uint16_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kU32:
      return RunValued<uint32_t>(p, in, init_value, init_index, out_value, out_index);
    case P::kU64:
      return RunValued<uint64_t>(p, in, init_value, init_index, out_value, out_index);
    default:
      return;
  }
}

}  // namespace uir::runtime
