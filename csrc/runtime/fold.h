// One binary fold op on elements of a C++ type, as HLO defines it: the
// inner step of the runtime's reduce-window and scatter loops.
#ifndef UIR_RUNTIME_FOLD_H_
#define UIR_RUNTIME_FOLD_H_

#include <cmath>
#include <complex>
#include <type_traits>

#include "runtime/window.h"

namespace uir::runtime {

// Whether T is a std::complex (the runtime's loops over any element type).
template <typename T>
struct IsComplexType : std::false_type {};
template <typename T>
struct IsComplexType<std::complex<T>> : std::true_type {};

// acc op x, as HLO defines op on T: integers wrap, maximum and minimum of
// floats propagate NaN (the left one first, as the evaluator does), pred's
// add and multiply are or and and, complex numbers add and multiply.
template <typename T, FoldOp Op>
inline T Apply(T a, T b) {
  if constexpr (IsComplexType<T>::value) {
    if constexpr (Op == FoldOp::kAdd) return a + b;
    if constexpr (Op == FoldOp::kMultiply) return a * b;
    return a;  // no order, no bits: refused by WindowTypeSupported
  } else if constexpr (std::is_same_v<T, bool>) {
    if constexpr (Op == FoldOp::kAdd || Op == FoldOp::kMaximum || Op == FoldOp::kOr) {
      return a || b;
    } else {
      return a && b;
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (Op == FoldOp::kAdd) return a + b;
    if constexpr (Op == FoldOp::kMultiply) return a * b;
    if constexpr (Op == FoldOp::kMaximum) {
      return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
    }
    if constexpr (Op == FoldOp::kMinimum) {
      return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
    }
    return a;  // and/or: refused by WindowTypeSupported
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (Op == FoldOp::kAdd) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (Op == FoldOp::kMultiply) {
      // Promoted past int so that u16 * u16 cannot overflow a signed int.
      using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
      return static_cast<T>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
    }
    if constexpr (Op == FoldOp::kMaximum) return a > b ? a : b;
    if constexpr (Op == FoldOp::kMinimum) return a < b ? a : b;
    if constexpr (Op == FoldOp::kAnd) return static_cast<T>(a & b);
    if constexpr (Op == FoldOp::kOr) return static_cast<T>(a | b);
  }
}

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_FOLD_H_
