// Linear algebra, FFT, top-k, batch norm and dynamic sizes. Floats work in
// f64 (complex in c128) and round once to the result type.
#include "eval/linalg.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <numeric>
#include <type_traits>

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
using hlo::PrimitiveType;
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
  return hlo::IsComplex(t) ? PrimitiveType::kC128 : PrimitiveType::kF64;
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

Literal Fft(const HloInstruction& inst, const Literal& in) {
  const hlo::FftType type = inst.attributes().GetEnum<hlo::FftType>(AttrKey::kFftType);
  const auto& length = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kFftLength);
  const auto& out_dims = inst.shape().dimensions();
  const size_t rank = out_dims.size(), k = length.size();
  const Literal x = Convert(in, PrimitiveType::kC128);
  std::vector<int64_t> dims = in.shape().dimensions();
  std::vector<C> data(Data<C>(x), Data<C>(x) + x.element_count());
  if (type == hlo::FftType::kIrfft) {
    // Inverse over the leading fft dims, then rebuild each last-dim line
    // from Hermitian symmetry and invert it.
    for (size_t d = rank - k; d + 1 < rank; ++d) FftLines(data, dims, d, true);
    const int64_t n = length.back(), half = dims.back();
    std::vector<int64_t> full = dims;
    full.back() = n;
    std::vector<C> expanded(static_cast<size_t>(n == 0 ? 0 : data.size() / half * n));
    for (size_t line = 0; half > 0 && line < data.size() / half; ++line) {
      for (int64_t i = 0; i < n; ++i) {
        expanded[line * n + i] =
            i < half ? data[line * half + i] : std::conj(data[line * half + (n - i)]);
      }
    }
    FftLines(expanded, full, rank - 1, true);
    Literal out = MakeLiteral(PrimitiveType::kF64, out_dims);
    for (int64_t i = 0; i < out.element_count(); ++i)
      MutableData<double>(out)[i] = expanded[i].real();
    return Convert(out, inst.shape().element_type());
  }
  const bool inverse = type == hlo::FftType::kIfft;
  for (size_t d = rank - k; d < rank; ++d) FftLines(data, dims, d, inverse);
  Literal out = MakeLiteral(PrimitiveType::kC128, out_dims);
  // RFFT keeps the first n/2+1 entries of the last dim.
  const auto in_strides = Strides(dims);
  ForEachIndex(out_dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * in_strides[d];
    MutableData<C>(out)[linear] = data[src];
  });
  return Convert(out, inst.shape().element_type());
}

// topk(x), k, largest: the k largest (or smallest) along the last dim,
// NaN counting as the largest, ties in index order.
Literal TopK(const HloInstruction& inst, const Literal& x) {
  const int64_t k = inst.attributes().Get<int64_t>(AttrKey::kK);
  const bool largest = inst.attributes().GetOr<bool>(AttrKey::kLargest).value_or(true);
  Literal values = MakeLiteral(x.shape().element_type(), inst.shape().tuple_shapes(0).dimensions());
  Literal indices = MakeLiteral(PrimitiveType::kS32, inst.shape().tuple_shapes(1).dimensions());
  const int64_t n = x.shape().dimensions().back();
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double va = x.GetDouble(r * n + a), vb = x.GetDouble(r * n + b);
      if (std::isnan(va) || std::isnan(vb))
        return largest ? std::isnan(va) && !std::isnan(vb) : !std::isnan(va) && std::isnan(vb);
      return largest ? va > vb : va < vb;
    });
    for (int64_t j = 0; j < k; ++j) {
      CopyElement(x, r * n + order[j], values, r * k + j);
      indices.SetInt64(r * k + j, order[j]);
    }
  }
  return TupleOf({std::move(values), std::move(indices)});
}

// Batch norm over every dimension but `feature_index`, in f64.
Literal BatchNorm(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  const int64_t f = inst.attributes().Get<int64_t>(AttrKey::kFeatureIndex);
  const double eps = inst.attributes().Get<double>(AttrKey::kEpsilon);
  const PrimitiveType t = ops[0]->shape().element_type();
  std::vector<Literal> w;
  for (const Literal* o : ops) w.push_back(Convert(*o, PrimitiveType::kF64));
  const auto& dims = ops[0]->shape().dimensions();
  const int64_t features = dims[f];
  const int64_t stride = Strides(dims)[f];
  const int64_t total = ops[0]->element_count();
  const double count = features == 0 ? 0 : static_cast<double>(total / features);
  auto feature = [&](int64_t i) { return (i / stride) % features; };
  auto per_feature_mean = [&](auto value) {
    std::vector<double> m(static_cast<size_t>(features), 0.0);
    for (int64_t i = 0; i < total; ++i) m[feature(i)] += value(i);
    for (double& v : m) v /= count;
    return m;
  };
  const double* x = Data<double>(w[0]);
  auto vec = [](const Literal& l) {
    return std::vector<double>(Data<double>(l), Data<double>(l) + l.element_count());
  };
  auto out_of = [&](const std::vector<double>& v, const std::vector<int64_t>& d) {
    Literal l = MakeLiteral(PrimitiveType::kF64, d);
    std::copy(v.begin(), v.end(), MutableData<double>(l));
    return Convert(l, t);
  };
  const std::vector<double> scale = vec(w[1]);
  if (inst.opcode() == HloOpcode::kBatchNormInference ||
      inst.opcode() == HloOpcode::kBatchNormTraining) {
    std::vector<double> mean, var;
    if (inst.opcode() == HloOpcode::kBatchNormInference) {
      mean = vec(w[3]);
      var = vec(w[4]);
    } else {
      mean = per_feature_mean([&](int64_t i) { return x[i]; });
      var = per_feature_mean([&](int64_t i) {
        const double d = x[i] - mean[feature(i)];
        return d * d;
      });
    }
    const std::vector<double> offset = vec(w[2]);
    std::vector<double> y(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      const int64_t c = feature(i);
      y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
    }
    if (inst.opcode() == HloOpcode::kBatchNormInference) return out_of(y, dims);
    return TupleOf({out_of(y, dims), out_of(mean, {features}), out_of(var, {features})});
  }
  // batch-norm-grad(operand, scale, mean, variance, grad_output).
  const std::vector<double> mean = vec(w[2]), var = vec(w[3]);
  const double* dy = Data<double>(w[4]);
  const auto dy_mean = per_feature_mean([&](int64_t i) { return dy[i]; });
  const auto dy_xc_mean =
      per_feature_mean([&](int64_t i) { return dy[i] * (x[i] - mean[feature(i)]); });
  std::vector<double> dx(static_cast<size_t>(total)), dscale(static_cast<size_t>(features)),
      doffset(static_cast<size_t>(features));
  for (int64_t c = 0; c < features; ++c) {
    doffset[c] = dy_mean[c] * count;
    dscale[c] = dy_xc_mean[c] * count / std::sqrt(var[c] + eps);
  }
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = feature(i);
    const double inv = 1.0 / std::sqrt(var[c] + eps);
    dx[i] =
        scale[c] * inv * (dy[i] - dy_mean[c] - (x[i] - mean[c]) * dy_xc_mean[c] / (var[c] + eps));
  }
  return TupleOf({out_of(dx, dims), out_of(dscale, {features}), out_of(doffset, {features})});
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
  throw InternalError("EvalLinalgOp called on " + std::string(hlo::OpcodeName(inst.opcode())));
}

}  // namespace uir::eval
