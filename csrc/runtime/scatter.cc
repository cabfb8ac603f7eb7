// The library scatter: the operand copied into the result, then every
// update window combined in, in the updates' order on one thread (equal
// indices combine in the order the evaluator and XLA:CPU use).
#include "runtime/scatter.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/fold.h"
#include "runtime/strided.h"

namespace uir::runtime {

namespace {

// The `n` contiguous elements at `to` combined with those at `from`, in
// order (a loop the compiler vectorizes).
template <typename T, FoldOp Op, bool Replace>
void Combine(uint8_t* to, const uint8_t* from, int64_t n) {
  if constexpr (Replace) {
    std::memmove(to, from, static_cast<size_t>(n) * sizeof(T));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      T a, b;
      std::memcpy(&a, to + i * int64_t{sizeof(T)}, sizeof(T));
      std::memcpy(&b, from + i * int64_t{sizeof(T)}, sizeof(T));
      const T c = Apply<T, Op>(a, b);
      std::memcpy(to + i * int64_t{sizeof(T)}, &c, sizeof(T));
    }
  }
}

using CombineFn = void (*)(uint8_t*, const uint8_t*, int64_t);

template <typename T>
CombineFn CombinerFor(const ScatterPlan& p) {
  if (p.replace) return &Combine<T, FoldOp::kAdd, true>;
  switch (p.op) {
    case FoldOp::kAdd:
      return &Combine<T, FoldOp::kAdd, false>;
    case FoldOp::kMultiply:
      return &Combine<T, FoldOp::kMultiply, false>;
    case FoldOp::kMaximum:
      return &Combine<T, FoldOp::kMaximum, false>;
    case FoldOp::kMinimum:
      return &Combine<T, FoldOp::kMinimum, false>;
    case FoldOp::kAnd:
      if constexpr (!std::is_floating_point_v<T>) return &Combine<T, FoldOp::kAnd, false>;
      return nullptr;
    case FoldOp::kOr:
      if constexpr (!std::is_floating_point_v<T>) return &Combine<T, FoldOp::kOr, false>;
      return nullptr;
  }
  return nullptr;
}

CombineFn CombinerOf(const ScatterPlan& p) {
  using P = hlo::PrimitiveType;
  switch (p.type) {
    case P::kPred:
      return CombinerFor<bool>(p);
    case P::kS8:
      return CombinerFor<int8_t>(p);
    case P::kS16:
      return CombinerFor<int16_t>(p);
    case P::kS32:
      return CombinerFor<int32_t>(p);
    case P::kS64:
      return CombinerFor<int64_t>(p);
    case P::kU8:
      return CombinerFor<uint8_t>(p);
    case P::kU16:
      return CombinerFor<uint16_t>(p);
    case P::kU32:
      return CombinerFor<uint32_t>(p);
    case P::kU64:
      return CombinerFor<uint64_t>(p);
    case P::kF32:
      return CombinerFor<float>(p);
    case P::kF64:
      return CombinerFor<double>(p);
    default:
      return nullptr;
  }
}

}  // namespace

int64_t ScatterPlan::OperandElements(bool out) const {
  return SpannedElements(operand_size, out ? out_stride : operand_stride, operand_rank);
}
int64_t ScatterPlan::UpdateElements() const {
  return SpannedElements(update_size, update_stride, update_rank);
}
int64_t ScatterPlan::IndexElements() const {
  return SpannedElements(index_size, index_stride, index_rank);
}

std::string ScatterPlan::Invalid() const {
  if (!hlo::IsInteger(index_type) || index_type == hlo::PrimitiveType::kPred) {
    return "indices of " + std::string(hlo::PrimitiveTypeName(index_type));
  }
  if (CombinerOf(*this) == nullptr) {
    return (replace ? std::string("replacing") : std::string(FoldOpName(op))) + " " +
           std::string(hlo::PrimitiveTypeName(type));
  }
  if (operand_rank < 0 || operand_rank > kMaxRank || update_rank < 0 || update_rank > kMaxRank ||
      index_rank < 0 || index_rank > kMaxRank) {
    return "rank";
  }
  if (index_vector_dim < 0 || index_vector_dim > index_rank || index_count < 0 ||
      index_count > kMaxRank || batching < 0 || batching > kMaxRank) {
    return "index vector";
  }
  for (int k = 0; k < index_count; ++k) {
    const int d = to_operand[static_cast<size_t>(k)];
    if (d < 0 || d >= operand_rank) return "scatter_dims_to_operand_dims";
  }
  for (int d = 0; d < update_rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if ((update_operand[k] < 0) == (update_index[k] < 0)) return "update dimension map";
    if (update_operand[k] >= operand_rank || update_index[k] >= index_rank) {
      return "update dimension map";
    }
  }
  return "";
}

std::string ScatterPlan::ToString() const {
  auto dims = [](const Dims& d, int rank) {
    std::string s;
    for (int i = 0; i < rank; ++i) s += (i ? "x" : "") + std::to_string(d[static_cast<size_t>(i)]);
    return s;
  };
  return "scatter " + (replace ? std::string("replace") : std::string(FoldOpName(op))) + " " +
         std::string(hlo::PrimitiveTypeName(type)) + ", " +
         std::string(hlo::PrimitiveTypeName(index_type)) + " indices [" +
         dims(operand_size, operand_rank) + "] <- [" + dims(update_size, update_rank) + "]";
}

void RunScatter(const ScatterPlan& p, const void* operand, const void* indices, const void* updates,
                void* out) {
  const int64_t e = hlo::StorageBytes(p.type);
  auto* dst = static_cast<uint8_t*>(out);
  const auto* src = static_cast<const uint8_t*>(operand);
  // The operand into the result (element by element where the layouts
  // differ; nothing to do in place).
  if (dst != src && p.OperandElements(false) > 0) {
    if (p.operand_stride == p.out_stride) {
      std::memmove(dst, src, static_cast<size_t>(p.OperandElements(false) * e));
    } else {
      int64_t count = 1;
      for (int d = 0; d < p.operand_rank; ++d) count *= p.operand_size[static_cast<size_t>(d)];
      for (int64_t i = 0; i < count; ++i) {
        int64_t r = i, from = 0, to = 0;
        for (int d = p.operand_rank - 1; d >= 0; --d) {
          const auto k = static_cast<size_t>(d);
          const int64_t c = r % p.operand_size[k];
          r /= p.operand_size[k];
          from += c * p.operand_stride[k];
          to += c * p.out_stride[k];
        }
        std::memcpy(dst + to * e, src + from * e, static_cast<size_t>(e));
      }
    }
  }
  const CombineFn combine = CombinerOf(p);
  std::vector<int> scatter_dims, window_dims;
  int64_t positions = 1, per_window = 1;
  for (int d = 0; d < p.update_rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (p.update_operand[k] < 0) {
      scatter_dims.push_back(d);
      positions *= p.update_size[k];
    } else {
      window_dims.push_back(d);
      per_window *= p.update_size[k];
    }
  }
  if (positions == 0 || per_window == 0) return;
  const auto* idx = static_cast<const uint8_t*>(indices);
  const auto* upd = static_cast<const uint8_t*>(updates);
  const int64_t index_bytes = hlo::StorageBytes(p.index_type);
  // The window's extent along each operand dimension (1 where inserted).
  std::array<int64_t, ScatterPlan::kMaxRank> extent{};
  extent.fill(1);
  for (int d : window_dims) {
    extent[static_cast<size_t>(p.update_operand[static_cast<size_t>(d)])] =
        p.update_size[static_cast<size_t>(d)];
  }
  // Per scatter position: where its window starts in the result, and
  // whether it fits there.
  std::vector<int64_t> out_base(static_cast<size_t>(positions)), update_base(out_base.size());
  std::vector<char> fits(out_base.size());
  std::array<int64_t, ScatterPlan::kMaxRank> index_coord{}, start{};
  for (int64_t b = 0; b < positions; ++b) {
    int64_t base = 0, r = b;
    index_coord.fill(0);
    for (size_t j = scatter_dims.size(); j-- > 0;) {
      const auto d = static_cast<size_t>(scatter_dims[j]);
      const int64_t c = r % p.update_size[d];
      r /= p.update_size[d];
      base += c * p.update_stride[d];
      index_coord[static_cast<size_t>(p.update_index[d])] = c;
    }
    update_base[static_cast<size_t>(b)] = base;
    start.fill(0);
    for (int k = 0; k < p.index_count; ++k) {
      int64_t at = 0;
      for (int d = 0; d < p.index_rank; ++d) {
        const auto kd = static_cast<size_t>(d);
        at += (d == p.index_vector_dim ? k : index_coord[kd]) * p.index_stride[kd];
      }
      start[static_cast<size_t>(p.to_operand[static_cast<size_t>(k)])] =
          ReadIndex(p.index_type, idx + at * index_bytes);
    }
    for (int k = 0; k < p.batching; ++k) {
      start[static_cast<size_t>(p.operand_batching[static_cast<size_t>(k)])] =
          index_coord[static_cast<size_t>(p.indices_batching[static_cast<size_t>(k)])];
    }
    bool ok = true;
    int64_t at = 0;
    for (int d = 0; d < p.operand_rank; ++d) {
      const auto k = static_cast<size_t>(d);
      ok = ok && start[k] >= 0 && start[k] <= p.operand_size[k] - extent[k];
      at += start[k] * p.out_stride[k];
    }
    out_base[static_cast<size_t>(b)] = at;
    fits[static_cast<size_t>(b)] = ok;
  }
  // The updates in their row-major order, which is position by position
  // when every scatter dimension comes before every window dimension.
  const bool by_position =
      scatter_dims.empty() || window_dims.empty() || scatter_dims.back() < window_dims.front();
  if (by_position) {
    // Runs along the innermost window dimension where it is contiguous in
    // both the updates and the result.
    int64_t run = 1;
    size_t outer = window_dims.size();
    if (!window_dims.empty()) {
      const auto d = static_cast<size_t>(window_dims.back());
      if (p.update_stride[d] == 1 && p.out_stride[static_cast<size_t>(p.update_operand[d])] == 1) {
        run = p.update_size[d];
        outer = window_dims.size() - 1;
      }
    }
    for (int64_t b = 0; b < positions; ++b) {
      if (!fits[static_cast<size_t>(b)]) continue;
      for (int64_t w = 0; w < per_window / run; ++w) {
        int64_t to = out_base[static_cast<size_t>(b)], from = update_base[static_cast<size_t>(b)];
        int64_t rest = w;
        for (size_t j = outer; j-- > 0;) {
          const auto d = static_cast<size_t>(window_dims[j]);
          const int64_t c = rest % p.update_size[d];
          rest /= p.update_size[d];
          from += c * p.update_stride[d];
          to += c * p.out_stride[static_cast<size_t>(p.update_operand[d])];
        }
        combine(dst + to * e, upd + from * e, run);
      }
    }
    return;
  }
  const int64_t total = positions * per_window;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, b = 0, b_scale = 1, from = 0, to = 0;
    for (int d = p.update_rank - 1; d >= 0; --d) {
      const auto k = static_cast<size_t>(d);
      const int64_t c = rest % p.update_size[k];
      rest /= p.update_size[k];
      from += c * p.update_stride[k];
      if (p.update_operand[k] < 0) {
        b += c * b_scale;
        b_scale *= p.update_size[k];
      } else {
        to += c * p.out_stride[static_cast<size_t>(p.update_operand[k])];
      }
    }
    if (!fits[static_cast<size_t>(b)]) continue;
    combine(dst + (out_base[static_cast<size_t>(b)] + to) * e, upd + from * e, 1);
  }
}

}  // namespace uir::runtime
