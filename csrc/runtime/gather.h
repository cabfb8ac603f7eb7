// The library gather: XLA's general gather (any offset, collapsed and
// batching dimensions, any index vector dimension and index type, any
// layout), described by numbers only (the Kernel Graph plans it from a
// gather instruction).
#ifndef UIR_RUNTIME_GATHER_H_
#define UIR_RUNTIME_GATHER_H_

#include <array>
#include <cstdint>
#include <string>

#include "support/primitive_type.h"

namespace uir::runtime {

// Every output position splits into batch coordinates (the output
// dimensions that are not offset dimensions, which walk the start
// indices' dimensions other than the index vector's, in order) and offset
// coordinates (one per operand dimension the slice keeps). The index
// vector at the batch position gives the slice's start in the operand
// dimensions of start_index_map, each clamped so that the slice fits; an
// operand batching dimension starts at the batch coordinate of its start
// indices batching dimension. The output element is the operand's at
// start + offset. Arrays are addressed by element strides.
struct GatherPlan {
  static constexpr int kMaxRank = 8;
  using Dims = std::array<int64_t, kMaxRank>;
  using Map = std::array<int, kMaxRank>;
  int64_t element_bytes = 4;
  PrimitiveType index_type = PrimitiveType::kS32;
  int operand_rank = 0, out_rank = 0, index_rank = 0;
  Dims operand_size{}, operand_stride{}, slice_size{};
  Dims out_size{}, out_stride{};
  Dims index_size{}, index_stride{};
  int index_vector_dim = 0;  // index_rank: each index is one scalar
  // Per output dimension: the operand dimension an offset dimension walks
  // (-1 for a batch dimension), and the start indices dimension a batch
  // dimension walks (-1 for an offset dimension).
  Map out_operand{}, out_index{};
  int index_count = 0;  // the index vector's length
  Map start_index_map{};
  int batching = 0;
  Map operand_batching{}, indices_batching{};

  int64_t OperandElements() const;
  int64_t OutputElements() const;
  int64_t IndexElements() const;
  std::string Invalid() const;
  // "gather s32 indices [10000x64] -> [4096x64], slices 1x64".
  std::string ToString() const;
};

void RunGather(const GatherPlan& plan, const void* operand, const void* indices, void* out);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GATHER_H_
