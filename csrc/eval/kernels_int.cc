// Elementwise kernels for pred and the integer types, with XLA's results for
// the cases C++ leaves undefined: division by zero, INT_MIN / -1, shifts by
// out-of-range amounts, overflow (wraps), abs/negate of INT_MIN.
#include <bit>
#include <limits>
#include <type_traits>
#include <vector>

#include "eval/kernels.h"
#include "eval/kernels_impl.h"

namespace uir::eval {
namespace {

using hlo::HloOpcode;
using internal::Map1;
using internal::Map2;

// Arithmetic in the unsigned twin, so overflow wraps instead of being UB.
template <typename T>
using U = std::make_unsigned_t<T>;

// Unsigned arithmetic at least as wide as unsigned int: narrower unsigned
// types would promote to (signed) int, where overflow is undefined.
template <typename T>
using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U<T>>;

template <typename T>
T Div(T a, T b) {
  if (b == 0) return std::is_signed_v<T> ? T(-1) : std::numeric_limits<T>::max();
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return a;
  }
  return a / b;
}

template <typename T>
T Rem(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (a == std::numeric_limits<T>::min() && b == T(-1)) return 0;
  }
  return a % b;
}

template <typename T>
T Pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  W<T> result = 1, b = static_cast<U<T>>(base);
  auto e = static_cast<U<T>>(exp);
  while (e) {
    if (e & 1) result = static_cast<U<T>>(result * b);
    b = static_cast<U<T>>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

template <typename T>
T ShiftLeft(T a, T s) {
  constexpr auto bits = static_cast<U<T>>(sizeof(T) * 8);
  if (static_cast<U<T>>(s) >= bits) return 0;
  return static_cast<T>(static_cast<W<T>>(static_cast<U<T>>(a)) << static_cast<U<T>>(s));
}

template <typename T>
T ShiftRightLogical(T a, T s) {
  constexpr auto bits = static_cast<U<T>>(sizeof(T) * 8);
  if (static_cast<U<T>>(s) >= bits) return 0;
  return static_cast<T>(static_cast<U<T>>(a) >> static_cast<U<T>>(s));
}

template <typename T>
T ShiftRightArithmetic(T a, T s) {
  using S = std::make_signed_t<T>;
  constexpr auto bits = static_cast<U<T>>(sizeof(T) * 8);
  const auto sa = static_cast<S>(a);
  if (static_cast<U<T>>(s) >= bits) return static_cast<T>(sa < 0 ? S(-1) : S(0));
  return static_cast<T>(sa >> static_cast<U<T>>(s));
}

template <typename T>
T MulHi(T a, T b) {
  if constexpr (sizeof(T) < 8) {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (sizeof(T) * 8));
  } else {
    __extension__ typedef __int128 S128;
    __extension__ typedef unsigned __int128 U128;
    using W = std::conditional_t<std::is_signed_v<T>, S128, U128>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  }
}

template <typename T>
bool IntUnary(HloOpcode op, const T* x, T* o, int64_t n) {
  switch (op) {
    case HloOpcode::kAbs:
      if constexpr (std::is_signed_v<T>) {
        Map1(x, o, n,
             [](T v) { return v < 0 ? static_cast<T>(U<T>(0) - static_cast<U<T>>(v)) : v; });
        return true;
      }
      return false;
    case HloOpcode::kNegate:
      Map1(x, o, n, [](T v) { return static_cast<T>(U<T>(0) - static_cast<U<T>>(v)); });
      return true;
    case HloOpcode::kSign:
      Map1(x, o, n, [](T v) { return v > 0 ? T(1) : (v == 0 ? T(0) : static_cast<T>(-1)); });
      return true;
    case HloOpcode::kNot:
      Map1(x, o, n, [](T v) { return static_cast<T>(~v); });
      return true;
    case HloOpcode::kPopulationCount:
      Map1(x, o, n, [](T v) { return static_cast<T>(std::popcount(static_cast<U<T>>(v))); });
      return true;
    case HloOpcode::kClz:
      Map1(x, o, n, [](T v) { return static_cast<T>(std::countl_zero(static_cast<U<T>>(v))); });
      return true;
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
      Map1(x, o, n, [](T v) { return v; });
      return true;
    default:
      return false;
  }
}

template <typename T, typename With>
bool WithIntBinary(HloOpcode op, With&& with) {
  auto wrap = [](auto f) {
    return [f](T a, T b) {
      return static_cast<T>(
          f(static_cast<W<T>>(static_cast<U<T>>(a)), static_cast<W<T>>(static_cast<U<T>>(b))));
    };
  };
  switch (op) {
    case HloOpcode::kAdd:
      with(wrap([](W<T> a, W<T> b) { return a + b; }));
      return true;
    case HloOpcode::kSubtract:
      with(wrap([](W<T> a, W<T> b) { return a - b; }));
      return true;
    case HloOpcode::kMultiply:
      with(wrap([](W<T> a, W<T> b) { return a * b; }));
      return true;
    case HloOpcode::kDivide:
      with([](T a, T b) { return Div(a, b); });
      return true;
    case HloOpcode::kRemainder:
      with([](T a, T b) { return Rem(a, b); });
      return true;
    case HloOpcode::kPower:
      with([](T a, T b) { return Pow(a, b); });
      return true;
    case HloOpcode::kMaximum:
      with([](T a, T b) { return a > b ? a : b; });
      return true;
    case HloOpcode::kMinimum:
      with([](T a, T b) { return a < b ? a : b; });
      return true;
    case HloOpcode::kAnd:
      with([](T a, T b) { return static_cast<T>(a & b); });
      return true;
    case HloOpcode::kOr:
      with([](T a, T b) { return static_cast<T>(a | b); });
      return true;
    case HloOpcode::kXor:
      with([](T a, T b) { return static_cast<T>(a ^ b); });
      return true;
    case HloOpcode::kShiftLeft:
      with([](T a, T b) { return ShiftLeft(a, b); });
      return true;
    case HloOpcode::kShiftRightLogical:
      with([](T a, T b) { return ShiftRightLogical(a, b); });
      return true;
    case HloOpcode::kShiftRightArithmetic:
      with([](T a, T b) { return ShiftRightArithmetic(a, b); });
      return true;
    case HloOpcode::kMulhi:
      with([](T a, T b) { return MulHi(a, b); });
      return true;
    default:
      return false;
  }
}

template <typename T, typename With>
bool WithBoolBinary(HloOpcode op, With&& with) {
  // XLA computes pred arithmetic in C++'s bool: add is or, multiply is and,
  // subtract is xor.
  switch (op) {
    case HloOpcode::kAnd:
    case HloOpcode::kMinimum:
    case HloOpcode::kMultiply:
      with([](bool a, bool b) { return a && b; });
      return true;
    case HloOpcode::kOr:
    case HloOpcode::kMaximum:
    case HloOpcode::kAdd:
      with([](bool a, bool b) { return a || b; });
      return true;
    case HloOpcode::kXor:
    case HloOpcode::kSubtract:
      with([](bool a, bool b) { return a != b; });
      return true;
    default:
      return false;
  }
}

// The family's binary ops: calls fn with the scalar function of `op`, for
// internal::RunBinary and internal::RunFold; false if `op` is not binary here.
struct IntOps {
  template <typename T, typename Fn>
  static bool With(HloOpcode op, Fn&& fn) {
    if constexpr (std::is_same_v<T, bool>) {
      return WithBoolBinary<T>(op, fn);
    } else {
      return WithIntBinary<T>(op, fn);
    }
  }
};

}  // namespace

template <typename T>
bool UnaryKernel(HloOpcode op, const T* x, T* o, int64_t n) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case HloOpcode::kNot:
        Map1(x, o, n, [](bool v) { return !v; });
        return true;
      case HloOpcode::kCopy:
      case HloOpcode::kOptimizationBarrier:
        Map1(x, o, n, [](bool v) { return v; });
        return true;
      default:
        return false;
    }
  } else {
    return IntUnary(op, x, o, n);
  }
}

template <typename T>
bool BinaryKernel(HloOpcode op, const T* x, const T* y, T* o, int64_t n) {
  return internal::RunBinary<IntOps>(op, x, y, o, n);
}

template <typename T>
bool FoldKernel(HloOpcode op, T* acc, const T* x, int64_t n) {
  return internal::RunFold<IntOps>(op, acc, x, n);
}

template <typename T>
void CompareKernel(Direction d, bool total_order, const T* x, const T* y, bool* o, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    if (total_order) {
      // Map floats to integers whose order is IEEE's totalOrder:
      // -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
      using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
      constexpr Bits kSign = Bits(1) << (sizeof(T) * 8 - 1);
      auto key = [](T v) {
        Bits b = std::bit_cast<Bits>(v);
        return (b & kSign) ? ~b : (b | kSign);
      };
      std::vector<Bits> kx(n), ky(n);
      for (int64_t i = 0; i < n; ++i) {
        kx[i] = key(x[i]);
        ky[i] = key(y[i]);
      }
      CompareKernel<Bits>(d, false, kx.data(), ky.data(), o, n);
      return;
    }
  }
  switch (d) {
    case Direction::kEq:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] == y[i];
      break;
    case Direction::kNe:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] != y[i];
      break;
    case Direction::kGe:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] >= y[i];
      break;
    case Direction::kGt:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] > y[i];
      break;
    case Direction::kLe:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] <= y[i];
      break;
    case Direction::kLt:
      for (int64_t i = 0; i < n; ++i) o[i] = x[i] < y[i];
      break;
  }
}

#define UIR_INSTANTIATE_INT(T)                                               \
  template bool UnaryKernel<T>(HloOpcode, const T*, T*, int64_t);            \
  template bool BinaryKernel<T>(HloOpcode, const T*, const T*, T*, int64_t); \
  template bool FoldKernel<T>(HloOpcode, T*, const T*, int64_t);
UIR_INSTANTIATE_INT(bool)
UIR_INSTANTIATE_INT(int8_t)
UIR_INSTANTIATE_INT(int16_t)
UIR_INSTANTIATE_INT(int32_t)
UIR_INSTANTIATE_INT(int64_t)
UIR_INSTANTIATE_INT(uint8_t)
UIR_INSTANTIATE_INT(uint16_t)
UIR_INSTANTIATE_INT(uint32_t)
UIR_INSTANTIATE_INT(uint64_t)
#undef UIR_INSTANTIATE_INT

#define UIR_INSTANTIATE_COMPARE(T) \
  template void CompareKernel<T>(Direction, bool, const T*, const T*, bool*, int64_t);
UIR_EVAL_FOR_REAL_TYPES(UIR_INSTANTIATE_COMPARE)
#undef UIR_INSTANTIATE_COMPARE

}  // namespace uir::eval
