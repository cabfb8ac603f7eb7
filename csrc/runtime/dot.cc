// The library dot: each operand packed once into the compute type's
// row-major [batch, m, k] and [batch, k, n] (whatever its layout and
// dimension order), multiplied on BLAS (floats, complex numbers) or in a
// row loop of our own (integers, with wraparound), and the product
// written out through the result's strides in its element type.
#include "runtime/dot.h"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/fold.h"
#include "runtime/gemm.h"
#include "runtime/narrow_float.h"
#include "runtime/strided.h"
#include "support/error.h"
#include "support/float_format.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

using P = PrimitiveType;
using Dims = DotPlan::Dims;

int64_t Product(const Dims& d, int rank) {
  int64_t p = 1;
  for (int i = 0; i < rank; ++i) p *= d[static_cast<size_t>(i)];
  return p;
}

// The offsets of a row-major walk over `rank` dimensions of `size`, each
// `stride` elements apart.
std::vector<int64_t> Offsets(const Dims& size, const Dims& stride, int rank) {
  std::vector<int64_t> out(static_cast<size_t>(Product(size, rank)));
  Dims index{};
  int64_t offset = 0;
  for (int64_t& o : out) {
    o = offset;
    for (int d = rank - 1; d >= 0; --d) {
      const auto k = static_cast<size_t>(d);
      if (++index[k] < size[k]) {
        offset += stride[k];
        break;
      }
      offset -= (size[k] - 1) * stride[k];
      index[k] = 0;
    }
  }
  return out;
}

// The compute type of a result type: integers in unsigned words of at
// least their width (wraparound is the same modulo 2^width), narrow floats
// in f32.
enum class Compute { kF32, kF64, kC64, kC128, kU32, kU64 };

Compute ComputeOf(P out) {
  if (out == P::kF64) return Compute::kF64;
  if (out == P::kC64) return Compute::kC64;
  if (out == P::kC128) return Compute::kC128;
  if (IsInteger(out) || out == P::kPred) {
    return BitWidth(out) <= 32 ? Compute::kU32 : Compute::kU64;
  }
  return Compute::kF32;
}

// Whether values of T convert to the compute type C.
template <typename C, typename T>
constexpr bool Converts() {
  if constexpr (IsComplexType<T>::value) return IsComplexType<C>::value;
  if constexpr (std::is_floating_point_v<T>) return !std::is_integral_v<C>;
  return true;
}

template <typename C, typename T>
C ConvertTo(T v) {
  if constexpr (IsComplexType<C>::value) {
    using R = typename C::value_type;
    if constexpr (IsComplexType<T>::value) {
      return C(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    } else {
      return C(static_cast<R>(v), R(0));
    }
  } else if constexpr (std::is_integral_v<C>) {
    if constexpr (std::is_signed_v<T>) {
      return static_cast<C>(static_cast<int64_t>(v));  // sign-extended, then wrapped
    } else {
      return static_cast<C>(static_cast<uint64_t>(v));
    }
  } else {
    return static_cast<C>(v);
  }
}

// rows x cols of `src` (row r at row_offsets[r], column c at
// col_offsets[c]) into the dense rows of `dst`.
template <typename C, typename T>
void PackTyped(const T* src, const std::vector<int64_t>& row_offsets,
               const std::vector<int64_t>& col_offsets, C* dst) {
  if constexpr (!Converts<C, T>()) {
    UIR_CHECK(false) << "dot: an operand type the compute type does not hold";
  } else {
    const auto cols = static_cast<int64_t>(col_offsets.size());
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
    ParallelFor(static_cast<int64_t>(row_offsets.size()), grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* row = src + row_offsets[static_cast<size_t>(r)];
        C* out = dst + r * cols;
        for (int64_t c = 0; c < cols; ++c) {
          out[c] = ConvertTo<C>(row[col_offsets[static_cast<size_t>(c)]]);
        }
      }
    });
  }
}

template <typename C>
void Pack(P type, const void* src, int64_t span, const std::vector<int64_t>& rows,
          const std::vector<int64_t>& cols, C* dst) {
  if (IsNarrowFloat(type)) {
    std::unique_ptr<float[]> wide(new float[static_cast<size_t>(span)]);
    WidenToF32(type, src, span, wide.get());
    PackTyped<C>(wide.get(), rows, cols, dst);
    return;
  }
  if (IsInteger(type) && BitWidth(type) < 8) {
    // Sub-byte integers, one per byte: the low bits, sign-extended for
    // the signed types, whatever the byte's upper bits hold.
    const int bits = BitWidth(type);
    const auto* bytes = static_cast<const uint8_t*>(src);
    std::unique_ptr<int8_t[]> wide(new int8_t[static_cast<size_t>(span)]);
    for (int64_t i = 0; i < span; ++i) {
      int v = bytes[i] & ((1 << bits) - 1);
      if (IsSigned(type) && (v & (1 << (bits - 1))) != 0) v -= 1 << bits;
      wide[static_cast<size_t>(i)] = static_cast<int8_t>(v);
    }
    PackTyped<C>(wide.get(), rows, cols, dst);
    return;
  }
  switch (type) {
#define UIR_PACK(E, T)                                         \
  case P::E:                                                   \
    PackTyped<C>(static_cast<const T*>(src), rows, cols, dst); \
    return;
    UIR_PACK(kPred, uint8_t)
    UIR_PACK(kS8, int8_t)
    UIR_PACK(kS16, int16_t)
    UIR_PACK(kS32, int32_t)
    UIR_PACK(kS64, int64_t)
    UIR_PACK(kU8, uint8_t)
    UIR_PACK(kU16, uint16_t)
    UIR_PACK(kU32, uint32_t)
    UIR_PACK(kU64, uint64_t)
    UIR_PACK(kF32, float)
    UIR_PACK(kF64, double)
    UIR_PACK(kC64, std::complex<float>)
    UIR_PACK(kC128, std::complex<double>)
#undef UIR_PACK
    default:
      UIR_CHECK(false) << "dot: operands of " << PrimitiveTypeName(type);
  }
}

// The dense product rows, written through the result's offsets.
template <typename T, typename C>
void UnpackTyped(const C* src, const std::vector<int64_t>& row_offsets,
                 const std::vector<int64_t>& col_offsets, T* dst) {
  const auto cols = static_cast<int64_t>(col_offsets.size());
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(cols, 1));
  ParallelFor(static_cast<int64_t>(row_offsets.size()), grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* row = dst + row_offsets[static_cast<size_t>(r)];
      const C* in = src + r * cols;
      for (int64_t c = 0; c < cols; ++c) {
        // Integers: modulo 2^width, the result's wraparound.
        row[col_offsets[static_cast<size_t>(c)]] = static_cast<T>(in[c]);
      }
    }
  });
}

template <typename C>
void Unpack(P type, const C* src, int64_t span, const std::vector<int64_t>& rows,
            const std::vector<int64_t>& cols, void* dst) {
  if constexpr (std::is_same_v<C, float>) {
    if (IsNarrowFloat(type)) {
      std::unique_ptr<float[]> wide(new float[static_cast<size_t>(span)]);
      UnpackTyped<float>(src, rows, cols, wide.get());
      NarrowFromF32(type, wide.get(), span, dst);
      return;
    }
  }
  if constexpr (std::is_integral_v<C>) {
    switch (type) {
#define UIR_UNPACK(E, T)                                   \
  case P::E:                                               \
    UnpackTyped<T>(src, rows, cols, static_cast<T*>(dst)); \
    return;
      UIR_UNPACK(kPred, bool)  // nonzero: true
      UIR_UNPACK(kS8, int8_t)
      UIR_UNPACK(kS16, int16_t)
      UIR_UNPACK(kS32, int32_t)
      UIR_UNPACK(kS64, int64_t)
      UIR_UNPACK(kU8, uint8_t)
      UIR_UNPACK(kU16, uint16_t)
      UIR_UNPACK(kU32, uint32_t)
      UIR_UNPACK(kU64, uint64_t)
#undef UIR_UNPACK
      default:
        break;
    }
  } else if constexpr (IsComplexType<C>::value) {
    UnpackTyped<C>(src, rows, cols, static_cast<C*>(dst));
    return;
  } else {
    if ((std::is_same_v<C, float> && type == P::kF32) ||
        (std::is_same_v<C, double> && type == P::kF64)) {
      UnpackTyped<C>(src, rows, cols, static_cast<C*>(dst));
      return;
    }
  }
  UIR_CHECK(false) << "dot: results of " << PrimitiveTypeName(type);
}

blasint Int(int64_t v) {
  UIR_CHECK(v <= INT_MAX) << "matrix dimension " << v << " exceeds BLAS's int";
  return static_cast<blasint>(v);
}

// c[b] = a[b] * w[b] for dense row-major [m x k] and [k x n] blocks.
template <typename C>
void Multiply(int64_t batch, int64_t m, int64_t n, int64_t k, const C* a, const C* w, C* c) {
  if constexpr (std::is_same_v<C, float> || std::is_same_v<C, double>) {
    GemmPlan g;
    g.f64 = std::is_same_v<C, double>;
    g.batch = batch;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a_batch_stride = m * k;
    g.b_batch_stride = k * n;
    g.c_batch_stride = m * n;
    RunGemm(g, a, w, c);
  } else if constexpr (IsComplexType<C>::value) {
    const C one(1), zero(0);
    for (int64_t b = 0; b < batch; ++b) {
      const C* ab = a + b * m * k;
      const C* wb = w + b * k * n;
      C* cb = c + b * m * n;
      if constexpr (std::is_same_v<C, std::complex<float>>) {
        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int(m), Int(n), Int(k), &one, ab,
                    Int(k), wb, Int(n), &zero, cb, Int(n));
      } else {
        cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int(m), Int(n), Int(k), &one, ab,
                    Int(k), wb, Int(n), &zero, cb, Int(n));
      }
    }
  } else {
    // Integers: each result row accumulates k scaled rows of w (the inner
    // loop vectorizes), rows over the workers.
    const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(n * k, 1));
    ParallelFor(batch * m, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t b = r / m;
        C* out = c + r * n;
        std::fill(out, out + n, C(0));
        const C* arow = a + r * k;
        for (int64_t kk = 0; kk < k; ++kk) {
          const C s = arow[kk];
          const C* wrow = w + (b * k + kk) * n;
          for (int64_t j = 0; j < n; ++j) out[j] += s * wrow[j];
        }
      }
    });
  }
}

template <typename C>
void RunIn(const DotPlan& p, const void* lhs, const void* rhs, void* out) {
  const int64_t batch = p.Batch(), m = p.M(), n = p.N(), k = p.K();
  std::unique_ptr<C[]> a(new C[static_cast<size_t>(batch * m * k)]);
  std::unique_ptr<C[]> w(new C[static_cast<size_t>(batch * k * n)]);
  std::unique_ptr<C[]> c(new C[static_cast<size_t>(batch * m * n)]());
  // Row offsets of [batch, m] and [batch, k] walks: each batch offset plus
  // each inner one.
  auto rows = [&](const Dims& batch_stride, const Dims& size, const Dims& stride, int rank) {
    const std::vector<int64_t> outer = Offsets(p.batch, batch_stride, p.batch_rank);
    const std::vector<int64_t> inner = Offsets(size, stride, rank);
    std::vector<int64_t> all;
    all.reserve(outer.size() * inner.size());
    for (int64_t o : outer) {
      for (int64_t i : inner) all.push_back(o + i);
    }
    return all;
  };
  if (k > 0) {
    Pack<C>(p.lhs_type, lhs, p.LhsElements(), rows(p.lhs_batch, p.m, p.lhs_m, p.m_rank),
            Offsets(p.k, p.lhs_k, p.k_rank), a.get());
    Pack<C>(p.rhs_type, rhs, p.RhsElements(), rows(p.rhs_batch, p.k, p.rhs_k, p.k_rank),
            Offsets(p.n, p.rhs_n, p.n_rank), w.get());
    Multiply<C>(batch, m, n, k, a.get(), w.get(), c.get());
  }
  Unpack<C>(p.out_type, c.get(), p.OutElements(), rows(p.out_batch, p.m, p.out_m, p.m_rank),
            Offsets(p.n, p.out_n, p.n_rank), out);
}

}  // namespace

int64_t DotPlan::Batch() const { return Product(batch, batch_rank); }
int64_t DotPlan::M() const { return Product(m, m_rank); }
int64_t DotPlan::N() const { return Product(n, n_rank); }
int64_t DotPlan::K() const { return Product(k, k_rank); }

int64_t DotPlan::LhsElements() const {
  int64_t last = 0;
  for (int d = 0; d < batch_rank; ++d) last += (batch[d] - 1) * lhs_batch[d];
  for (int d = 0; d < m_rank; ++d) last += (m[d] - 1) * lhs_m[d];
  for (int d = 0; d < k_rank; ++d) last += (k[d] - 1) * lhs_k[d];
  return Batch() * M() * K() == 0 ? 0 : last + 1;
}
int64_t DotPlan::RhsElements() const {
  int64_t last = 0;
  for (int d = 0; d < batch_rank; ++d) last += (batch[d] - 1) * rhs_batch[d];
  for (int d = 0; d < k_rank; ++d) last += (k[d] - 1) * rhs_k[d];
  for (int d = 0; d < n_rank; ++d) last += (n[d] - 1) * rhs_n[d];
  return Batch() * K() * N() == 0 ? 0 : last + 1;
}
int64_t DotPlan::OutElements() const {
  int64_t last = 0;
  for (int d = 0; d < batch_rank; ++d) last += (batch[d] - 1) * out_batch[d];
  for (int d = 0; d < m_rank; ++d) last += (m[d] - 1) * out_m[d];
  for (int d = 0; d < n_rank; ++d) last += (n[d] - 1) * out_n[d];
  return Batch() * M() * N() == 0 ? 0 : last + 1;
}

bool DotTypesSupported(P lhs, P rhs, P out) {
  // pred counts as an integer of 0 and 1; a pred result is whether the
  // sum of products is nonzero (the or of ands).
  auto integral = [](P t) { return IsInteger(t) || t == P::kPred; };
  auto numeric = [&](P t) {
    return (integral(t) && (BitWidth(t) >= 2 || t == P::kPred)) || t == P::kF32 || t == P::kF64 ||
           IsNarrowFloat(t) || IsComplex(t);
  };
  if (!numeric(lhs) || !numeric(rhs) || !numeric(out) || (BitWidth(out) < 8 && out != P::kPred)) {
    return false;
  }
  for (P t : {lhs, rhs}) {
    if (IsComplex(t) && !IsComplex(out)) return false;
    if (!integral(t) && integral(out)) return false;
  }
  return true;
}

std::string DotPlan::Invalid() const {
  if (!DotTypesSupported(lhs_type, rhs_type, out_type)) {
    return std::string(PrimitiveTypeName(lhs_type)) + " x " +
           std::string(PrimitiveTypeName(rhs_type)) + " -> " +
           std::string(PrimitiveTypeName(out_type));
  }
  for (int r : {batch_rank, m_rank, n_rank, k_rank}) {
    if (r < 0 || r > kMaxDims) return "rank";
  }
  const std::pair<const Dims*, int> lists[] = {
      {&batch, batch_rank}, {&m, m_rank}, {&n, n_rank}, {&k, k_rank}};
  for (const auto& [d, r] : lists) {
    for (int i = 0; i < r; ++i) {
      if ((*d)[static_cast<size_t>(i)] < 0) return "size";
    }
  }
  // The result is dense: every element it spans is written.
  if (OutElements() != Batch() * M() * N()) return "result layout";
  return "";
}

std::string DotPlan::ToString() const {
  std::string s = std::string(PrimitiveTypeName(lhs_type)) + " x " +
                  std::string(PrimitiveTypeName(rhs_type)) + " -> " +
                  std::string(PrimitiveTypeName(out_type)) + " ";
  if (batch_rank > 0) s += std::to_string(Batch()) + "x";
  return s + "[" + std::to_string(M()) + "x" + std::to_string(K()) + "]*[" + std::to_string(K()) +
         "x" + std::to_string(N()) + "]";
}

void RunDot(const DotPlan& p, const void* lhs, const void* rhs, void* out) {
  if (p.Batch() * p.M() * p.N() == 0) return;
  switch (ComputeOf(p.out_type)) {
    case Compute::kF32:
      return RunIn<float>(p, lhs, rhs, out);
    case Compute::kF64:
      return RunIn<double>(p, lhs, rhs, out);
    case Compute::kC64:
      return RunIn<std::complex<float>>(p, lhs, rhs, out);
    case Compute::kC128:
      return RunIn<std::complex<double>>(p, lhs, rhs, out);
    case Compute::kU32:
      return RunIn<uint32_t>(p, lhs, rhs, out);
    case Compute::kU64:
      return RunIn<uint64_t>(p, lhs, rhs, out);
  }
}

}  // namespace uir::runtime
