// Elementwise kernels for float and double, with XLA's semantics: NaN-
// propagating maximum/minimum, round-nearest-even/afz, sign of -0 and NaN.
#include <cmath>
#include <limits>

#include "eval/kernels.h"
#include "eval/kernels_impl.h"

namespace uir::eval {
namespace {

using hlo::HloOpcode;
using internal::Map1;
using internal::Map2;

template <typename T>
T Sign(T v) {
  if (std::isnan(v) || v == 0) return v;  // NaN stays NaN; -0 stays -0
  return v > 0 ? T(1) : T(-1);
}

}  // namespace

template <typename T>
bool UnaryKernel(HloOpcode op, const T* x, T* o, int64_t n) {
  switch (op) {
    case HloOpcode::kAbs:
      Map1(x, o, n, [](T v) { return std::fabs(v); });
      return true;
    case HloOpcode::kNegate:
      Map1(x, o, n, [](T v) { return -v; });
      return true;
    case HloOpcode::kSign:
      Map1(x, o, n, [](T v) { return Sign(v); });
      return true;
    case HloOpcode::kExp:
      Map1(x, o, n, [](T v) { return std::exp(v); });
      return true;
    case HloOpcode::kExpm1:
      Map1(x, o, n, [](T v) { return std::expm1(v); });
      return true;
    case HloOpcode::kLog:
      Map1(x, o, n, [](T v) { return std::log(v); });
      return true;
    case HloOpcode::kLog1p:
      Map1(x, o, n, [](T v) { return std::log1p(v); });
      return true;
    case HloOpcode::kLogistic:
      // e^v / (1 + e^v) below 0: the same value, without e^-v overflowing
      // to infinity (and the result to 0) where it is still a subnormal.
      Map1(x, o, n, [](T v) {
        if (v < T(0)) {
          const T e = std::exp(v);
          return e / (T(1) + e);
        }
        return T(1) / (T(1) + std::exp(-v));
      });
      return true;
    case HloOpcode::kSqrt:
      Map1(x, o, n, [](T v) { return std::sqrt(v); });
      return true;
    case HloOpcode::kRsqrt:
      Map1(x, o, n, [](T v) { return T(1) / std::sqrt(v); });
      return true;
    case HloOpcode::kCbrt:
      Map1(x, o, n, [](T v) { return std::cbrt(v); });
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
    case HloOpcode::kErf:
      Map1(x, o, n, [](T v) { return std::erf(v); });
      return true;
    case HloOpcode::kFloor:
      Map1(x, o, n, [](T v) { return std::floor(v); });
      return true;
    case HloOpcode::kCeil:
      Map1(x, o, n, [](T v) { return std::ceil(v); });
      return true;
    // nearbyint rounds to nearest, ties to even, in the default rounding mode.
    case HloOpcode::kRoundNearestEven:
      Map1(x, o, n, [](T v) { return std::nearbyint(v); });
      return true;
    case HloOpcode::kRoundNearestAfz:
      Map1(x, o, n, [](T v) { return std::round(v); });
      return true;
    case HloOpcode::kReal:
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
      Map1(x, o, n, [](T v) { return v; });
      return true;
    case HloOpcode::kImag:
      Map1(x, o, n, [](T) { return T(0); });
      return true;
    default:
      return false;
  }
}

// The family's binary ops: calls fn with the scalar function of `op`, for
// internal::RunBinary and internal::RunFold; false if `op` is not binary here.
struct FloatOps {
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
      case HloOpcode::kRemainder:
        fn([](T a, T b) { return std::fmod(a, b); });
        return true;
      case HloOpcode::kPower:
        fn([](T a, T b) { return std::pow(a, b); });
        return true;
      case HloOpcode::kAtan2:
        fn([](T a, T b) { return std::atan2(a, b); });
        return true;
      // XLA's maximum/minimum propagate NaN from either side.
      case HloOpcode::kMaximum:
        fn([](T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b); });
        return true;
      case HloOpcode::kMinimum:
        fn([](T a, T b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b); });
        return true;
      default:
        return false;
    }
  }
};

template <typename T>
bool BinaryKernel(HloOpcode op, const T* x, const T* y, T* o, int64_t n) {
  return internal::RunBinary<FloatOps>(op, x, y, o, n);
}

template <typename T>
bool FoldKernel(HloOpcode op, T* acc, const T* x, int64_t n) {
  return internal::RunFold<FloatOps>(op, acc, x, n);
}

template bool UnaryKernel<float>(HloOpcode, const float*, float*, int64_t);
template bool UnaryKernel<double>(HloOpcode, const double*, double*, int64_t);
template bool BinaryKernel<float>(HloOpcode, const float*, const float*, float*, int64_t);
template bool BinaryKernel<double>(HloOpcode, const double*, const double*, double*, int64_t);
template bool FoldKernel<float>(HloOpcode, float*, const float*, int64_t);
template bool FoldKernel<double>(HloOpcode, double*, const double*, int64_t);

}  // namespace uir::eval
