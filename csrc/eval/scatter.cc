// scatter and select-and-scatter.
//
// scatter follows XLA's dimension numbers: each scatter index of the updates
// names a start in the operand (from the index vector, plus batching dims),
// and the update window there is combined into the operand element by
// element. A window that would reach outside the operand anywhere is skipped
// whole, as XLA does. Updates apply in order: scatter indices row-major,
// then window indices row-major, so repeated indices combine in a defined
// order.
#include "eval/scatter.h"

#include <algorithm>
#include <cstring>

#include "eval/context.h"
#include "eval/kernels.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "support/float_format.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

std::vector<int64_t> IntList(const HloInstruction& inst, AttrKey key) {
  return inst.attributes().GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// How a combiner computation is applied to one element.
class Combiner {
 public:
  Combiner(const HloComputation& f, size_t n, PrimitiveType type, Context& ctx)
      : f_(f), n_(n), ctx_(ctx) {
    const HloInstruction* root = f.root();
    if (n == 1 && root->opcode() == HloOpcode::kParameter && root->parameter_number() == 1) {
      kind_ = Kind::kAssign;
    } else if (auto op = n == 1 && !IsNarrowFloat(type) ? SimpleReducer(f) : std::nullopt) {
      kind_ = Kind::kBinary;
      op_ = *op;
    }
  }

  // out[j][o] = f(out[..][o], upd[..][u]).
  void Apply(std::vector<Literal>& out, int64_t o, const std::vector<const Literal*>& upd,
             int64_t u) {
    switch (kind_) {
      case Kind::kAssign:
        CopyElement(*upd[0], u, out[0], o);
        return;
      case Kind::kBinary:
        DispatchNative(out[0].shape().element_type(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          T* acc = MutableData<T>(out[0]) + o;
          BinaryKernel<T>(op_, acc, Data<T>(*upd[0]) + u, acc, 1);
        });
        return;
      case Kind::kCall:
        break;
    }
    std::vector<Literal> scalars;
    for (size_t j = 0; j < n_; ++j) scalars.push_back(ElementAt(out[j], o));
    for (size_t j = 0; j < n_; ++j) scalars.push_back(ElementAt(*upd[j], u));
    std::vector<const Literal*> args;
    for (const Literal& s : scalars) args.push_back(&s);
    Literal r = ctx_.Call(f_, args);
    if (n_ == 1) {
      SetElement(out[0], o, r);
    } else {
      for (size_t j = 0; j < n_; ++j) SetElement(out[j], o, r.tuple_elements()[j]);
    }
  }

  // Sub-byte integers wrap back into their width after typed arithmetic.
  void Finish(std::vector<Literal>& out) {
    if (kind_ == Kind::kBinary) NormalizeSubByte(out[0]);
  }

 private:
  enum class Kind { kAssign, kBinary, kCall };
  const HloComputation& f_;
  size_t n_;
  Context& ctx_;
  Kind kind_ = Kind::kCall;
  HloOpcode op_ = HloOpcode::kAdd;
};

}  // namespace

namespace {

// Calls visit(o, u) for each operand element o that update element u
// combines into, in XLA's order (scatter positions row-major, then window
// positions); `index_at(i)` reads element i of the indices. A window that
// would reach outside the operand is skipped whole.
template <typename ReadIndex, typename Visit>
void ForEachScatterPair(const HloInstruction& inst, const std::vector<int64_t>& operand_dims,
                        const std::vector<int64_t>& index_dims,
                        const std::vector<int64_t>& update_dims, ReadIndex&& index_at,
                        Visit&& visit) {
  const auto window_dims = IntList(inst, AttrKey::kUpdateWindowDims);
  const auto inserted = IntList(inst, AttrKey::kInsertedWindowDims);
  const auto to_operand = IntList(inst, AttrKey::kScatterDimsToOperandDims);
  const auto operand_batching = IntList(inst, AttrKey::kInputBatchingDims);
  const auto indices_batching = IntList(inst, AttrKey::kScatterIndicesBatchingDims);
  const int64_t index_vector_dim = inst.attributes().Get<int64_t>(AttrKey::kIndexVectorDim);
  const int64_t rank = static_cast<int64_t>(operand_dims.size());
  const auto update_strides = Strides(update_dims);
  const auto operand_strides = Strides(operand_dims);
  const auto index_strides = Strides(index_dims);
  const auto index_rank = static_cast<int64_t>(index_dims.size());

  // Update dims that index scatter positions, and their sizes.
  std::vector<int64_t> scatter_dims, scatter_sizes, window_sizes;
  for (int64_t d = 0; d < static_cast<int64_t>(update_dims.size()); ++d) {
    if (!Contains(window_dims, d)) {
      scatter_dims.push_back(d);
      scatter_sizes.push_back(update_dims[d]);
    }
  }
  for (int64_t d : window_dims) window_sizes.push_back(update_dims[d]);
  // Operand dim each window dim runs along; window extent along each operand dim.
  std::vector<int64_t> window_operand_dim;
  std::vector<int64_t> extent(static_cast<size_t>(rank), 1);
  for (int64_t d = 0, k = 0; d < rank; ++d) {
    if (Contains(inserted, d) || Contains(operand_batching, d)) continue;
    window_operand_dim.push_back(d);
    extent[d] = window_sizes[k++];
  }
  // The indices dim a scatter position's coordinate k indexes.
  auto indices_dim = [&](int64_t k) { return k < index_vector_dim ? k : k + 1; };

  std::vector<int64_t> start(static_cast<size_t>(rank));
  ForEachIndex(scatter_sizes, [&](const std::vector<int64_t>& pos, int64_t) {
    // Where this scatter position's index vector starts in `indices`.
    int64_t base = 0;
    for (size_t k = 0; k < pos.size(); ++k) base += pos[k] * index_strides[indices_dim(k)];
    const int64_t step = index_vector_dim < index_rank ? index_strides[index_vector_dim] : 0;
    std::fill(start.begin(), start.end(), 0);
    for (size_t k = 0; k < to_operand.size(); ++k)
      start[to_operand[k]] = index_at(base + static_cast<int64_t>(k) * step);
    for (size_t i = 0; i < operand_batching.size(); ++i) {
      const int64_t k =
          indices_batching[i] < index_vector_dim ? indices_batching[i] : indices_batching[i] - 1;
      start[operand_batching[i]] = pos[k];
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] > operand_dims[d] - extent[d]) return;  // skipped whole
    }
    int64_t update_base = 0;
    for (size_t k = 0; k < pos.size(); ++k) update_base += pos[k] * update_strides[scatter_dims[k]];
    int64_t operand_base = 0;
    for (int64_t d = 0; d < rank; ++d) operand_base += start[d] * operand_strides[d];
    ForEachIndex(window_sizes, [&](const std::vector<int64_t>& w, int64_t) {
      int64_t u = update_base, o = operand_base;
      for (size_t k = 0; k < w.size(); ++k) {
        u += w[k] * update_strides[window_dims[k]];
        o += w[k] * operand_strides[window_operand_dim[k]];
      }
      visit(o, u);
    });
  });
}

}  // namespace

Literal EvalScatter(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                    Context& ctx, Literal* target) {
  const size_t n = (ops.size() - 1) / 2;
  const Literal& indices = *ops[n];
  std::vector<const Literal*> updates(ops.begin() + static_cast<int64_t>(n) + 1, ops.end());
  // Read before `target` (which may be ops[0]) is moved into the result.
  const std::vector<int64_t> operand_dims = ops[0]->shape().dimensions();
  const PrimitiveType type = ops[0]->shape().element_type();
  std::vector<Literal> out;
  for (size_t j = 0; j < n; ++j) {
    if (j == 0 && target != nullptr) {
      out.push_back(std::move(*target));
    } else {
      out.push_back(*ops[j]);
    }
  }
  Combiner combine(*inst.attributes().Get<HloComputation*>(AttrKey::kToApply), n, type, ctx);
  ForEachScatterPair(
      inst, operand_dims, indices.shape().dimensions(), updates[0]->shape().dimensions(),
      [&](int64_t i) { return indices.GetInt64(i); },
      [&](int64_t o, int64_t u) { combine.Apply(out, o, updates, u); });
  combine.Finish(out);
  if (n == 1) return std::move(out[0]);
  return TupleOf(std::move(out));
}

// select-and-scatter: for each window of the operand (one per source
// element), `select` picks one element among those inside the operand (a
// padding position is never picked): scanning the window in row-major
// order, the current pick is kept while select(pick, candidate) is true.
// The source element is then scattered onto the pick's position of an
// output filled with the init value.
Literal EvalSelectAndScatter(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                             Context& ctx) {
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const HloComputation& select = *inst.attributes().Get<HloComputation*>(AttrKey::kSelect);
  const auto& window = inst.attributes().Get<hlo::Window>(AttrKey::kWindow).dimensions;
  const std::vector<int64_t>& dims = operand.shape().dimensions();
  const auto strides = Strides(dims);
  std::vector<int64_t> window_sizes;
  for (const hlo::WindowDim& w : window) window_sizes.push_back(w.size);

  std::vector<Literal> out(1, MakeLiteral(operand.shape().element_type(), dims));
  for (int64_t i = 0; i < out[0].element_count(); ++i) SetElement(out[0], i, *ops[2]);
  Combiner scatter(*inst.attributes().Get<HloComputation*>(AttrKey::kScatter), 1,
                   operand.shape().element_type(), ctx);
  const std::vector<const Literal*> sources = {&source};
  std::vector<std::vector<int64_t>> offsets;  // every position in a window, row-major
  ForEachIndex(window_sizes, [&](const std::vector<int64_t>& w, int64_t) { offsets.push_back(w); });

  ForEachIndex(source.shape().dimensions(), [&](const std::vector<int64_t>& s, int64_t s_linear) {
    int64_t pick = -1;
    for (const std::vector<int64_t>& w : offsets) {
      int64_t at = 0;
      bool inside = true;
      for (size_t d = 0; d < window.size() && inside; ++d) {
        const hlo::WindowDim& wd = window[d];
        const int64_t pos = s[d] * wd.stride + w[d] * wd.window_dilation - wd.padding_low;
        const int64_t i = pos / wd.base_dilation;
        inside = pos >= 0 && pos % wd.base_dilation == 0 && i < dims[d];
        at += i * strides[d];
      }
      if (!inside) continue;
      if (pick < 0) {
        pick = at;
        continue;
      }
      Literal current = ElementAt(operand, pick), candidate = ElementAt(operand, at);
      if (!ctx.Call(select, {&current, &candidate}).GetBits(0)) pick = at;
    }
    if (pick >= 0) scatter.Apply(out, pick, sources, s_linear);
  });
  scatter.Finish(out);
  return std::move(out[0]);
}

}  // namespace uir::eval
