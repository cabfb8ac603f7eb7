// The library scatter: the operand copied into the result, then every
// update window combined in, in the updates' order on one thread (equal
// indices combine in the order the evaluator and XLA:CPU use).
#include "runtime/scatter.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <vector>

#include "runtime/fold.h"
#include "runtime/narrow_float.h"
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

// Replacing: the update's bytes, elements of any type of `Bytes` bytes.
template <int Bytes>
void Replace(uint8_t* to, const uint8_t* from, int64_t n) {
  std::memmove(to, from, static_cast<size_t>(n) * Bytes);
}

// Narrow floats (f16, bf16, the f8 types): each run widened to f32,
// combined there and rounded back, as the op on the type is defined.
template <PrimitiveType Type, FoldOp Op>
void CombineNarrowFloat(uint8_t* to, const uint8_t* from, int64_t n) {
  constexpr int64_t kRun = 256;
  const int64_t size = StorageBytes(Type);
  float a[kRun], b[kRun];
  for (int64_t s = 0; s < n; s += kRun) {
    const int64_t m = std::min(kRun, n - s);
    WidenToF32(Type, to + s * size, m, a);
    WidenToF32(Type, from + s * size, m, b);
    for (int64_t i = 0; i < m; ++i) a[i] = Apply<float, Op>(a[i], b[i]);
    NarrowFromF32(Type, a, m, to + s * size);
  }
}

// Integers of fewer than 8 bits, one per byte: read from their low bits,
// combined as bytes, then wrapped to their width (sign-extended, or
// masked).
template <PrimitiveType Type, typename T, FoldOp Op>
void CombineSubByte(uint8_t* to, const uint8_t* from, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T c = Apply<T, Op>(static_cast<T>(SubByteValue(Type, to[i])),
                             static_cast<T>(SubByteValue(Type, from[i])));
    to[i] = SubByteValue(Type, static_cast<uint8_t>(c));
  }
}

// The combiner of `Op` through `Make<Op>()`, for the ops `T` has.
template <typename Make>
CombineFn ByOp(FoldOp op, bool numbers, bool bits, Make make) {
  switch (op) {
    case FoldOp::kAdd:
      return make.template operator()<FoldOp::kAdd>();
    case FoldOp::kMultiply:
      return make.template operator()<FoldOp::kMultiply>();
    case FoldOp::kMaximum:
      return numbers ? make.template operator()<FoldOp::kMaximum>() : nullptr;
    case FoldOp::kMinimum:
      return numbers ? make.template operator()<FoldOp::kMinimum>() : nullptr;
    case FoldOp::kAnd:
      return bits ? make.template operator()<FoldOp::kAnd>() : nullptr;
    case FoldOp::kOr:
      return bits ? make.template operator()<FoldOp::kOr>() : nullptr;
  }
  return nullptr;
}

template <typename T>
CombineFn CombinerFor(const ScatterPlan& p) {
  constexpr bool kInteger = !std::is_floating_point_v<T>;
  return ByOp(p.op, true, kInteger, []<FoldOp Op>() -> CombineFn {
    if constexpr (kInteger || (Op != FoldOp::kAnd && Op != FoldOp::kOr)) {
      return &Combine<T, Op, false>;
    }
    return nullptr;
  });
}

template <PrimitiveType Type>
CombineFn NarrowFloatCombiner(const ScatterPlan& p) {
  return ByOp(p.op, true, false, []<FoldOp Op>() -> CombineFn {
    if constexpr (Op != FoldOp::kAnd && Op != FoldOp::kOr) {
      return &CombineNarrowFloat<Type, Op>;
    }
    return nullptr;
  });
}

template <PrimitiveType Type, typename T>
CombineFn SubByteCombiner(const ScatterPlan& p) {
  return ByOp(p.op, true, true,
              []<FoldOp Op>() -> CombineFn { return &CombineSubByte<Type, T, Op>; });
}

template <typename T>
CombineFn ComplexCombiner(const ScatterPlan& p) {
  return ByOp(p.op, false, false, []<FoldOp Op>() -> CombineFn {
    // Complex numbers: sums and products (fold.h's Apply).
    if constexpr (Op == FoldOp::kAdd || Op == FoldOp::kMultiply) {
      return &Combine<std::complex<T>, Op, false>;
    }
    return nullptr;
  });
}

CombineFn CombinerOf(const ScatterPlan& p) {
  using P = PrimitiveType;
  if (p.replace) {
    switch (StorageBytes(p.type)) {
      case 1:
        return &Replace<1>;
      case 2:
        return &Replace<2>;
      case 4:
        return &Replace<4>;
      case 8:
        return &Replace<8>;
      case 16:
        return &Replace<16>;
      default:
        return nullptr;
    }
  }
  switch (p.type) {
    case P::kPred:
      return CombinerFor<bool>(p);
    case P::kS2:
      return SubByteCombiner<P::kS2, int8_t>(p);
    case P::kS4:
      return SubByteCombiner<P::kS4, int8_t>(p);
    case P::kU2:
      return SubByteCombiner<P::kU2, uint8_t>(p);
    case P::kU4:
      return SubByteCombiner<P::kU4, uint8_t>(p);
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
    case P::kF16:
      return NarrowFloatCombiner<P::kF16>(p);
    case P::kBF16:
      return NarrowFloatCombiner<P::kBF16>(p);
    case P::kF32:
      return CombinerFor<float>(p);
    case P::kF64:
      return CombinerFor<double>(p);
    case P::kC64:
      return ComplexCombiner<float>(p);
    case P::kC128:
      return ComplexCombiner<double>(p);
    case P::kF8E5M2:
      return NarrowFloatCombiner<P::kF8E5M2>(p);
    case P::kF8E4M3:
      return NarrowFloatCombiner<P::kF8E4M3>(p);
    case P::kF8E4M3FN:
      return NarrowFloatCombiner<P::kF8E4M3FN>(p);
    case P::kF8E4M3B11FNUZ:
      return NarrowFloatCombiner<P::kF8E4M3B11FNUZ>(p);
    case P::kF8E3M4:
      return NarrowFloatCombiner<P::kF8E3M4>(p);
    case P::kF8E5M2FNUZ:
      return NarrowFloatCombiner<P::kF8E5M2FNUZ>(p);
    case P::kF8E4M3FNUZ:
      return NarrowFloatCombiner<P::kF8E4M3FNUZ>(p);
    case P::kF8E8M0FNU:
      return NarrowFloatCombiner<P::kF8E8M0FNU>(p);
    case P::kF6E3M2FN:
      return NarrowFloatCombiner<P::kF6E3M2FN>(p);
    case P::kF6E2M3FN:
      return NarrowFloatCombiner<P::kF6E2M3FN>(p);
    case P::kF4E2M1FN:
      return NarrowFloatCombiner<P::kF4E2M1FN>(p);
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
  if (!IsInteger(index_type) || index_type == PrimitiveType::kPred) {
    return "indices of " + std::string(PrimitiveTypeName(index_type));
  }
  if (CombinerOf(*this) == nullptr) {
    return (replace ? std::string("replacing") : std::string(FoldOpName(op))) + " " +
           std::string(PrimitiveTypeName(type));
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
         std::string(PrimitiveTypeName(type)) + ", " + std::string(PrimitiveTypeName(index_type)) +
         " indices [" + dims(operand_size, operand_rank) + "] <- [" +
         dims(update_size, update_rank) + "]";
}

void RunScatter(const ScatterPlan& p, const void* operand, const void* indices, const void* updates,
                void* out) {
  const int64_t e = StorageBytes(p.type);
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
  const int64_t index_bytes = StorageBytes(p.index_type);
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
