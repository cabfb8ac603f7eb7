// The library gather: batch positions over the worker threads, each
// slice copied in runs along the output's innermost offset dimension
// where it is contiguous in both arrays.
#include "runtime/gather.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/strided.h"
#include "support/thread_pool.h"

namespace uir::runtime {

int64_t GatherPlan::OperandElements() const {
  return SpannedElements(operand_size, operand_stride, operand_rank);
}
int64_t GatherPlan::OutputElements() const {
  return SpannedElements(out_size, out_stride, out_rank);
}
int64_t GatherPlan::IndexElements() const {
  return SpannedElements(index_size, index_stride, index_rank);
}

std::string GatherPlan::Invalid() const {
  using P = PrimitiveType;
  if (!IsInteger(index_type) || index_type == P::kPred) {
    return "indices of " + std::string(PrimitiveTypeName(index_type));
  }
  if (operand_rank > kMaxRank || out_rank > kMaxRank || index_rank > kMaxRank || operand_rank < 0 ||
      out_rank < 0 || index_rank < 0) {
    return "rank";
  }
  if (index_vector_dim < 0 || index_vector_dim > index_rank || index_count < 0 ||
      index_count > kMaxRank || batching < 0 || batching > kMaxRank) {
    return "index vector";
  }
  for (int d = 0; d < operand_rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (slice_size[k] < 0 || slice_size[k] > operand_size[k]) return "slice size";
  }
  for (int k = 0; k < index_count; ++k) {
    const int d = start_index_map[static_cast<size_t>(k)];
    if (d < 0 || d >= operand_rank) return "start_index_map";
  }
  for (int d = 0; d < out_rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if ((out_operand[k] < 0) == (out_index[k] < 0)) return "output dimension map";
    if (out_operand[k] >= operand_rank || out_index[k] >= index_rank) return "output dimension map";
  }
  if (element_bytes < 1) return "element size";
  return "";
}

std::string GatherPlan::ToString() const {
  auto dims = [](const Dims& d, int rank) {
    std::string s;
    for (int i = 0; i < rank; ++i) s += (i ? "x" : "") + std::to_string(d[static_cast<size_t>(i)]);
    return s;
  };
  return "gather " + std::string(PrimitiveTypeName(index_type)) + " indices [" +
         dims(operand_size, operand_rank) + "] -> [" + dims(out_size, out_rank) + "], slices " +
         dims(slice_size, operand_rank);
}

void RunGather(const GatherPlan& p, const void* operand, const void* indices, void* out) {
  std::vector<int> batch_dims, offset_dims;
  int64_t positions = 1, per_slice = 1;
  for (int d = 0; d < p.out_rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (p.out_operand[k] < 0) {
      batch_dims.push_back(d);
      positions *= p.out_size[k];
    } else {
      offset_dims.push_back(d);
      per_slice *= p.out_size[k];
    }
  }
  if (positions == 0 || per_slice == 0) return;
  // A slice of no elements in some dimension (XLA allows it even where the
  // dimension is collapsed) selects nothing: every result element is zero.
  for (int d = 0; d < p.operand_rank; ++d) {
    if (p.slice_size[static_cast<size_t>(d)] == 0) {
      for (int64_t b = 0; b < positions * per_slice; ++b) {
        int64_t at = 0, r = b;
        for (int k = p.out_rank - 1; k >= 0; --k) {
          const auto kk = static_cast<size_t>(k);
          at += r % p.out_size[kk] * p.out_stride[kk];
          r /= p.out_size[kk];
        }
        std::memset(static_cast<uint8_t*>(out) + at * p.element_bytes, 0,
                    static_cast<size_t>(p.element_bytes));
      }
      return;
    }
  }
  // The innermost offset dimension as a run, when adjacent in both arrays.
  int64_t run = 1;
  if (!offset_dims.empty()) {
    const auto last = static_cast<size_t>(offset_dims.back());
    const auto od = static_cast<size_t>(p.out_operand[last]);
    if (p.out_stride[last] == 1 && p.operand_stride[od] == 1) run = p.out_size[last];
  }
  const int64_t e = p.element_bytes;
  const auto* src = static_cast<const uint8_t*>(operand);
  const auto* idx = static_cast<const uint8_t*>(indices);
  auto* dst = static_cast<uint8_t*>(out);
  const int64_t index_bytes = StorageBytes(p.index_type);
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, per_slice));
  ParallelFor(positions, grain, [&](int64_t begin, int64_t end) {
    std::array<int64_t, GatherPlan::kMaxRank> index_coord{}, start{};
    for (int64_t b = begin; b < end; ++b) {
      // Batch coordinates: the output offset and the indices coordinates.
      int64_t out_base = 0, r = b;
      index_coord.fill(0);
      for (size_t j = batch_dims.size(); j-- > 0;) {
        const auto d = static_cast<size_t>(batch_dims[j]);
        const int64_t c = r % p.out_size[d];
        r /= p.out_size[d];
        out_base += c * p.out_stride[d];
        index_coord[static_cast<size_t>(p.out_index[d])] = c;
      }
      start.fill(0);
      for (int k = 0; k < p.index_count; ++k) {
        int64_t at = 0;
        for (int d = 0; d < p.index_rank; ++d) {
          const auto kd = static_cast<size_t>(d);
          at += (d == p.index_vector_dim ? k : index_coord[kd]) * p.index_stride[kd];
        }
        const auto od = static_cast<size_t>(p.start_index_map[static_cast<size_t>(k)]);
        const int64_t v = ReadIndex(p.index_type, idx + at * index_bytes);
        start[od] = std::clamp<int64_t>(v, 0, p.operand_size[od] - p.slice_size[od]);
      }
      for (int k = 0; k < p.batching; ++k) {
        const auto od = static_cast<size_t>(p.operand_batching[static_cast<size_t>(k)]);
        start[od] = index_coord[static_cast<size_t>(p.indices_batching[static_cast<size_t>(k)])];
      }
      int64_t in_base = 0;
      for (int d = 0; d < p.operand_rank; ++d) {
        in_base += start[static_cast<size_t>(d)] * p.operand_stride[static_cast<size_t>(d)];
      }
      // The slice, run by run.
      for (int64_t s = 0; s < per_slice; s += run) {
        int64_t out_at = out_base, in_at = in_base, rest = s;
        for (size_t j = offset_dims.size(); j-- > 0;) {
          const auto d = static_cast<size_t>(offset_dims[j]);
          const int64_t c = rest % p.out_size[d];
          rest /= p.out_size[d];
          out_at += c * p.out_stride[d];
          in_at += c * p.operand_stride[static_cast<size_t>(p.out_operand[d])];
        }
        std::memcpy(dst + out_at * e, src + in_at * e, static_cast<size_t>(run * e));
      }
    }
  });
}

}  // namespace uir::runtime
