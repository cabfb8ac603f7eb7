// Elementwise kernels for c64 and c128 (ops whose result is complex; abs,
// real and imag produce reals and live in the evaluator).
#include <cmath>

#include "eval/kernels.h"
#include "eval/kernels_impl.h"

namespace uir::eval {
namespace {

using hlo::HloOpcode;
using internal::Map1;
using internal::Map2;

}  // namespace

template <typename T>
bool UnaryKernel(HloOpcode op, const T* x, T* o, int64_t n) {
  switch (op) {
    case HloOpcode::kNegate:
      Map1(x, o, n, [](T v) { return -v; });
      return true;
    case HloOpcode::kExp:
      Map1(x, o, n, [](T v) { return std::exp(v); });
      return true;
    case HloOpcode::kExpm1:
      Map1(x, o, n, [](T v) { return std::exp(v) - T(1); });
      return true;
    case HloOpcode::kLog:
      Map1(x, o, n, [](T v) { return std::log(v); });
      return true;
    case HloOpcode::kLog1p:
      Map1(x, o, n, [](T v) { return std::log(T(1) + v); });
      return true;
    case HloOpcode::kSqrt:
      Map1(x, o, n, [](T v) { return std::sqrt(v); });
      return true;
    case HloOpcode::kRsqrt:
      Map1(x, o, n, [](T v) { return T(1) / std::sqrt(v); });
      return true;
    case HloOpcode::kSin:
      Map1(x, o, n, [](T v) { return std::sin(v); });
      return true;
    case HloOpcode::kCos:
      Map1(x, o, n, [](T v) { return std::cos(v); });
      return true;
    case HloOpcode::kTan:
      Map1(x, o, n, [](T v) { return std::tan(v); });
      return true;
    case HloOpcode::kTanh:
      Map1(x, o, n, [](T v) { return std::tanh(v); });
      return true;
    case HloOpcode::kSinh:
      Map1(x, o, n, [](T v) { return std::sinh(v); });
      return true;
    case HloOpcode::kCosh:
      Map1(x, o, n, [](T v) { return std::cosh(v); });
      return true;
    case HloOpcode::kAsin:
      Map1(x, o, n, [](T v) { return std::asin(v); });
      return true;
    case HloOpcode::kAcos:
      Map1(x, o, n, [](T v) { return std::acos(v); });
      return true;
    case HloOpcode::kAsinh:
      Map1(x, o, n, [](T v) { return std::asinh(v); });
      return true;
    case HloOpcode::kAcosh:
      Map1(x, o, n, [](T v) { return std::acosh(v); });
      return true;
    case HloOpcode::kAtanh:
      Map1(x, o, n, [](T v) { return std::atanh(v); });
      return true;
    case HloOpcode::kLogistic:
      Map1(x, o, n, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
      return true;
    case HloOpcode::kSign:
      Map1(x, o, n, [](T v) { return std::abs(v) == 0 ? v : v / std::abs(v); });
      return true;
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
      Map1(x, o, n, [](T v) { return v; });
      return true;
    default:
      return false;
  }
}

// The family's binary ops: calls fn with the scalar function of `op`, for
// internal::RunBinary and internal::RunFold; false if `op` is not binary here.
struct ComplexOps {
  template <typename T, typename Fn>
  static bool With(HloOpcode op, Fn&& fn) {
    switch (op) {
      case HloOpcode::kAdd:
        fn([](T a, T b) { return a + b; });
        return true;
      case HloOpcode::kSubtract:
        fn([](T a, T b) { return a - b; });
        return true;
      case HloOpcode::kMultiply:
        fn([](T a, T b) { return a * b; });
        return true;
      case HloOpcode::kDivide:
        fn([](T a, T b) { return a / b; });
        return true;
      case HloOpcode::kPower:
        fn([](T a, T b) { return std::pow(a, b); });
        return true;
      case HloOpcode::kAtan2:
        // As JAX computes it: -i log((b + i a) / sqrt(b^2 + a^2)).
        fn([](T a, T b) {
          return T(0, -1) * std::log((b + T(0, 1) * a) / std::sqrt(b * b + a * a));
        });
        return true;
      default:
        return false;
    }
  }
};

template <typename T>
bool BinaryKernel(HloOpcode op, const T* x, const T* y, T* o, int64_t n) {
  return internal::RunBinary<ComplexOps>(op, x, y, o, n);
}

template <typename T>
bool FoldKernel(HloOpcode op, T* acc, const T* x, int64_t n) {
  return internal::RunFold<ComplexOps>(op, acc, x, n);
}

template <typename T>
void CompareKernel(Direction d, bool, const T* x, const T* y, bool* o, int64_t n) {
  // Complex numbers have no order; only EQ and NE reach here (the verifier
  // and the evaluator refuse the others).
  for (int64_t i = 0; i < n; ++i) o[i] = (x[i] == y[i]) == (d == Direction::kEq);
}

#define UIR_INSTANTIATE(T)                                                   \
  template bool UnaryKernel<T>(HloOpcode, const T*, T*, int64_t);            \
  template bool BinaryKernel<T>(HloOpcode, const T*, const T*, T*, int64_t); \
  template bool FoldKernel<T>(HloOpcode, T*, const T*, int64_t);             \
  template void CompareKernel<T>(Direction, bool, const T*, const T*, bool*, int64_t);
UIR_EVAL_FOR_COMPLEX_TYPES(UIR_INSTANTIATE)
#undef UIR_INSTANTIATE

}  // namespace uir::eval
