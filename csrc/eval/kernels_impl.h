// Loop templates shared by the kernels_*.cc files. Each dtype family defines
// a `With<T>(op, fn)` that calls fn with the scalar function of a binary op;
// the elementwise and fold kernels are built from it here, once.
#ifndef UIR_EVAL_KERNELS_IMPL_H_
#define UIR_EVAL_KERNELS_IMPL_H_

#include <cstdint>

#include "hlo/opcode.h"

namespace uir::eval::internal {

template <typename T, typename F>
void Map1(const T* x, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
}

template <typename T, typename F>
void Map2(const T* x, const T* y, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y[i]);
}

// out[i] = op(x[i], y[i]).
template <typename Family, typename T>
bool RunBinary(hlo::HloOpcode op, const T* x, const T* y, T* out, int64_t n) {
  return Family::template With<T>(op, [&](auto f) { Map2(x, y, out, n, f); });
}

// *acc = op(... op(op(*acc, x[0]), x[1]) ..., x[n-1]), in order.
template <typename Family, typename T>
bool RunFold(hlo::HloOpcode op, T* acc, const T* x, int64_t n) {
  return Family::template With<T>(op, [&](auto f) {
    T a = *acc;
    for (int64_t i = 0; i < n; ++i) a = f(a, x[i]);
    *acc = a;
  });
}

}  // namespace uir::eval::internal

#endif  // UIR_EVAL_KERNELS_IMPL_H_
