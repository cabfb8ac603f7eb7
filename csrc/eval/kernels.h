// Typed elementwise kernels over contiguous buffers: the evaluator's inner
// loops. T is the storage type of an element type (bool is uint8_t-backed
// `bool`, narrow floats are computed as float by the caller). Each returns
// false when `op` does not apply to T, so the caller can report it.
#ifndef UIR_EVAL_KERNELS_H_
#define UIR_EVAL_KERNELS_H_

#include <complex>
#include <cstdint>

#include "hlo/attribute_enums.h"
#include "hlo/opcode.h"

namespace uir::eval {

template <typename T>
bool UnaryKernel(hlo::HloOpcode op, const T* x, T* out, int64_t n);

template <typename T>
bool BinaryKernel(hlo::HloOpcode op, const T* x, const T* y, T* out, int64_t n);

// Folds x[0..n) into *acc in order: *acc = op(*acc, x[i]), with the same
// semantics as BinaryKernel (reductions use it).
template <typename T>
bool FoldKernel(hlo::HloOpcode op, T* acc, const T* x, int64_t n);

// compare: out[i] = x[i] <direction> y[i]; `total_order` for TOTALORDER on floats.
using Direction = hlo::ComparisonDirection;
template <typename T>
void CompareKernel(Direction d, bool total_order, const T* x, const T* y, bool* out, int64_t n);

// clang-format off
#define UIR_EVAL_FOR_REAL_TYPES(X) \
  X(bool) X(int8_t) X(int16_t) X(int32_t) X(int64_t) \
  X(uint8_t) X(uint16_t) X(uint32_t) X(uint64_t) X(float) X(double)
// clang-format on
#define UIR_EVAL_FOR_COMPLEX_TYPES(X) X(std::complex<float>) X(std::complex<double>)

}  // namespace uir::eval

#endif  // UIR_EVAL_KERNELS_H_
