// Linear algebra (cholesky, triangular-solve) and top-k, and the dispatch of
// the ops whose kernels live in fft.cc, batch_norm.cc and dynamic_size.cc.
// Floats work in f64 (complex in c128) and round once to the result type.
#include "eval/linalg.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <numeric>
#include <type_traits>

#include "eval/batch_norm.h"
#include "eval/dynamic_size.h"
#include "eval/elementwise.h"
#include "eval/fft.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using C = std::complex<double>;

template <typename T>
T Conj(T x) {
  if constexpr (std::is_same_v<T, C>) {
    return std::conj(x);
  } else {
    return x;
  }
}

PrimitiveType WorkType(PrimitiveType t) {
  return IsComplex(t) ? PrimitiveType::kC128 : PrimitiveType::kF64;
}

// Calls f.template operator()<T>() with T = double or complex<double>.
template <typename F>
void ForWork(PrimitiveType work, F&& f) {
  if (work == PrimitiveType::kC128) {
    f(Tag<C>{});
  } else {
    f(Tag<double>{});
  }
}

Literal Cholesky(const HloInstruction& inst, const Literal& in) {
  const bool lower = inst.attributes().GetOr<bool>(AttrKey::kLower).value_or(false);
  const PrimitiveType t = in.shape().element_type();
  const Literal a = Convert(in, WorkType(t));
  Literal out = MakeLiteral(WorkType(t), in.shape().dimensions());
  const int64_t n = in.shape().dimensions().back();
  const int64_t batch = n == 0 ? 0 : in.element_count() / (n * n);
  ForWork(WorkType(t), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t b = 0; b < batch; ++b) {
      const T* x = Data<T>(a) + b * n * n;
      T* o = MutableData<T>(out) + b * n * n;
      // A = L L^H from the lower triangle, or A = U^H U from the upper one
      // (U = L^H of the matrix whose lower triangle is the upper one, conjugated).
      auto A = [&](int64_t i, int64_t j) { return lower ? x[i * n + j] : Conj(x[j * n + i]); };
      std::vector<T> l(static_cast<size_t>(n * n), T(0));
      for (int64_t j = 0; j < n; ++j) {
        T d = A(j, j);
        for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * Conj(l[j * n + k]);
        const double diag = std::sqrt(std::real(d));  // NaN when not positive definite
        l[j * n + j] = T(diag);
        for (int64_t i = j + 1; i < n; ++i) {
          T s = A(i, j);
          for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * Conj(l[j * n + k]);
          l[i * n + j] = s / T(diag);
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) o[i * n + j] = lower ? l[i * n + j] : Conj(l[j * n + i]);
      }
    }
  });
  return Convert(out, t);
}

// Solves op(a) x = b (left_side) or x op(a) = b, a triangular.
Literal TriangularSolve(const HloInstruction& inst, const Literal& a_in, const Literal& b_in) {
  const auto& attrs = inst.attributes();
  const bool left = attrs.GetOr<bool>(AttrKey::kLeftSide).value_or(false);
  const bool lower = attrs.GetOr<bool>(AttrKey::kLower).value_or(false);
  const bool unit = attrs.GetOr<bool>(AttrKey::kUnitDiagonal).value_or(false);
  const hlo::TransposeKind op = attrs.GetEnumOr<hlo::TransposeKind>(AttrKey::kTransposeA)
                                    .value_or(hlo::TransposeKind::kNoTranspose);
  const PrimitiveType t = b_in.shape().element_type();
  const PrimitiveType w = WorkType(t);
  const Literal a = Convert(a_in, w), b = Convert(b_in, w);
  Literal out = MakeLiteral(w, b_in.shape().dimensions());
  const auto& bd = b_in.shape().dimensions();
  const int64_t rows = bd[bd.size() - 2], cols = bd.back();
  const int64_t k = left ? rows : cols;  // a is k x k
  const int64_t batch = rows * cols == 0 ? 0 : b_in.element_count() / (rows * cols);
  ForWork(w, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t bi = 0; bi < batch; ++bi) {
      const T* ap = Data<T>(a) + bi * k * k;
      // m = op(triangle of a), with a unit diagonal if asked.
      std::vector<T> m(static_cast<size_t>(k * k), T(0));
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          const bool in_triangle = lower ? j <= i : j >= i;
          T v = !in_triangle ? T(0) : (i == j && unit) ? T(1) : ap[i * k + j];
          if (op == hlo::TransposeKind::kNoTranspose) {
            m[i * k + j] = v;
          } else {
            m[j * k + i] = op == hlo::TransposeKind::kAdjoint ? Conj(v) : v;
          }
        }
      }
      bool m_lower = lower != (op != hlo::TransposeKind::kNoTranspose);
      // x op(a) = b  <=>  op(a)^T x^T = b^T: solve on the left with m^T.
      std::vector<T> rhs(static_cast<size_t>(rows * cols));
      const T* bp = Data<T>(b) + bi * rows * cols;
      int64_t n_rhs = cols;
      if (left) {
        std::copy(bp, bp + rows * cols, rhs.begin());
      } else {
        std::vector<T> mt(m.size());
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) mt[j * k + i] = m[i * k + j];
        m = std::move(mt);
        m_lower = !m_lower;
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) rhs[j * rows + i] = bp[i * cols + j];
        n_rhs = rows;
      }
      // Substitution, column by column of rhs (k x n_rhs).
      for (int64_t c = 0; c < n_rhs; ++c) {
        for (int64_t s = 0; s < k; ++s) {
          const int64_t i = m_lower ? s : k - 1 - s;
          T v = rhs[i * n_rhs + c];
          for (int64_t s2 = 0; s2 < s; ++s2) {
            const int64_t j = m_lower ? s2 : k - 1 - s2;
            v -= m[i * k + j] * rhs[j * n_rhs + c];
          }
          rhs[i * n_rhs + c] = v / m[i * k + i];
        }
      }
      T* o = MutableData<T>(out) + bi * rows * cols;
      if (left) {
        std::copy(rhs.begin(), rhs.end(), o);
      } else {
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) o[i * cols + j] = rhs[j * rows + i];
      }
    }
  });
  return Convert(out, t);
}

// topk(x), k, largest: the k largest (or smallest) along the last dim in
// the total order of the values (-NaN < -inf < ... < -0 < +0 < ... < inf
// < NaN, as XLA orders them), ties in index order.
Literal TopK(const HloInstruction& inst, const Literal& x) {
  const int64_t k = inst.attributes().Get<int64_t>(AttrKey::kK);
  const bool largest = inst.attributes().GetOr<bool>(AttrKey::kLargest).value_or(true);
  Literal values = MakeLiteral(x.shape().element_type(), inst.shape().tuple_shapes(0).dimensions());
  Literal indices = MakeLiteral(PrimitiveType::kS32, inst.shape().tuple_shapes(1).dimensions());
  const int64_t n = x.shape().dimensions().back();
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  const PrimitiveType t = x.shape().element_type();
  // Each element's place in the total order: (NaN class, value, zero's
  // sign); integers exactly, as themselves.
  struct Rank {
    int nan = 0;  // -1 for a NaN with the sign bit, +1 for one without
    double value = 0;
    int zero = 0;  // +0 above -0
    int64_t signed_value = 0;
    uint64_t unsigned_value = 0;
    auto operator<=>(const Rank&) const = default;
  };
  auto rank_of = [&](int64_t i) {
    Rank r;
    if (IsFloat(t)) {
      const double v = x.GetDouble(i);
      if (std::isnan(v)) {
        r.nan = std::signbit(v) ? -1 : 1;
      } else {
        r.value = v;
        r.zero = v == 0 && !std::signbit(v) ? 1 : 0;
      }
    } else if (IsUnsigned(t) || t == PrimitiveType::kPred) {
      r.unsigned_value = x.GetUint64(i);
    } else {
      r.signed_value = x.GetInt64(i);
    }
    return r;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::vector<Rank> ranks(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    for (int64_t i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = rank_of(r * n + i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const Rank& ra = ranks[static_cast<size_t>(a)];
      const Rank& rb = ranks[static_cast<size_t>(b)];
      return largest ? rb < ra : ra < rb;
    });
    for (int64_t j = 0; j < k; ++j) {
      CopyElement(x, r * n + order[j], values, r * k + j);
      indices.SetInt64(r * k + j, order[j]);
    }
  }
  return TupleOf({std::move(values), std::move(indices)});
}

}  // namespace

Literal EvalLinalgOp(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  switch (inst.opcode()) {
    case HloOpcode::kCholesky:
      return Cholesky(inst, *ops[0]);
    case HloOpcode::kTriangularSolve:
      return TriangularSolve(inst, *ops[0], *ops[1]);
    case HloOpcode::kFft:
      return Fft(inst, *ops[0]);
    case HloOpcode::kTopK:
      return TopK(inst, *ops[0]);
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:
      return BatchNorm(inst, ops);
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
    case HloOpcode::kDynamicReshape:
      return EvalDynamicSize(inst, ops);
    default:
      break;
  }
  throw InternalError("EvalLinalgOp called on " + std::string(hlo::OpcodeName(inst.opcode())));
}

}  // namespace uir::eval
