// The library dot in its general form: any batch, free and contracting
// dimensions in any order and layout, and element types BLAS's GEMM does
// not take (integers, complex numbers, mixed operand types), described by
// numbers only (the Kernel Graph plans it from a dot that GemmPlan's
// row-major form does not fit).
#ifndef UIR_RUNTIME_DOT_H_
#define UIR_RUNTIME_DOT_H_

#include <array>
#include <cstdint>
#include <string>

#include "support/primitive_type.h"

namespace uir::runtime {

// out[b, i, j] = sum over k of lhs[b, i, k] * rhs[b, k, j], where b, i, j
// and k each stand for a list of dimensions (batch, lhs free, rhs free,
// contracting) with an element stride per array. Operands are converted
// to the compute type first, as HLO converts them to the result type:
// integers multiply and add with wraparound in the result's width, narrow
// floats in f32 (rounded once at the end), f32 and f64 and complex values
// on BLAS.
struct DotPlan {
  static constexpr int kMaxDims = 8;
  using Dims = std::array<int64_t, kMaxDims>;
  PrimitiveType lhs_type = PrimitiveType::kF32;
  PrimitiveType rhs_type = PrimitiveType::kF32;
  PrimitiveType out_type = PrimitiveType::kF32;
  int batch_rank = 0, m_rank = 0, n_rank = 0, k_rank = 0;
  Dims batch{}, m{}, n{}, k{};  // sizes
  Dims lhs_batch{}, lhs_m{}, lhs_k{};
  Dims rhs_batch{}, rhs_n{}, rhs_k{};
  Dims out_batch{}, out_m{}, out_n{};

  int64_t Batch() const;
  int64_t M() const;
  int64_t N() const;
  int64_t K() const;
  // The elements each array spans (its largest offset plus one).
  int64_t LhsElements() const;
  int64_t RhsElements() const;
  int64_t OutElements() const;
  std::string Invalid() const;
  // "s8 x s8 -> s32 2x[3x4]*[4x5]".
  std::string ToString() const;
};

// Whether a dot of these element types runs: numeric operands whose
// values the result type holds the kind of (no complex into a real
// result, no floats into an integer one), pred excluded.
bool DotTypesSupported(PrimitiveType lhs, PrimitiveType rhs, PrimitiveType out);

void RunDot(const DotPlan& plan, const void* lhs, const void* rhs, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_DOT_H_
