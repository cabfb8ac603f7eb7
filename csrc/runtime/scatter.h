// The library scatter: XLA's general scatter of one operand (any window,
// inserted and batching dimensions, any index vector dimension and index
// type, any layout), its updates combined by one fold op or replacing,
// described by numbers only (the Kernel Graph plans it from a scatter).
// Element types: pred, integers of every width (those under 8 bits one per
// byte, wrapped to their width), floats of every width (those under 32
// bits combined in f32 and rounded back) and complex numbers (add and
// multiply); replacing copies the bytes of any type.
#ifndef UIR_RUNTIME_SCATTER_H_
#define UIR_RUNTIME_SCATTER_H_

#include <array>
#include <cstdint>
#include <string>

#include "runtime/window.h"
#include "support/primitive_type.h"

namespace uir::runtime {

// The result starts as the operand. Every update position splits into
// scatter coordinates (the update dimensions that are not window
// dimensions, which walk the scatter indices' dimensions other than the
// index vector's, in order) and window coordinates (one per operand
// dimension not inserted nor batching). The index vector gives the
// window's start in the operand dimensions of scatter_dims_to_operand_dims;
// an input batching dimension starts at the batch coordinate of its
// scatter indices batching dimension. A window that does not fit the
// operand is skipped whole. Each element is combined into the result in
// the updates' row-major order: result = result op update, or the update
// itself when replacing.
struct ScatterPlan {
  static constexpr int kMaxRank = 8;
  using Dims = std::array<int64_t, kMaxRank>;
  using Map = std::array<int, kMaxRank>;
  PrimitiveType type = PrimitiveType::kF32;
  bool replace = false;  // else `op`
  FoldOp op = FoldOp::kAdd;
  PrimitiveType index_type = PrimitiveType::kS32;
  int operand_rank = 0, update_rank = 0, index_rank = 0;
  Dims operand_size{}, operand_stride{}, out_stride{};
  Dims update_size{}, update_stride{};
  Dims index_size{}, index_stride{};
  int index_vector_dim = 0;
  // Per update dimension: the operand dimension a window dimension walks
  // (-1 for a scatter dimension), and the scatter indices dimension a
  // scatter dimension walks (-1 for a window dimension).
  Map update_operand{}, update_index{};
  int index_count = 0;
  Map to_operand{};  // scatter_dims_to_operand_dims
  int batching = 0;
  Map operand_batching{}, indices_batching{};

  int64_t OperandElements(bool out) const;
  int64_t UpdateElements() const;
  int64_t IndexElements() const;
  std::string Invalid() const;
  // "scatter add f32, s32 indices [10000x64] <- [4096x64]".
  std::string ToString() const;
};

// `out` may be `operand` itself (a scatter in place).
void RunScatter(const ScatterPlan& plan, const void* operand, const void* indices,
                const void* updates, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_SCATTER_H_
