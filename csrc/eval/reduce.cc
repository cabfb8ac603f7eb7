// map, reduce and reduce-window: folds that call the instruction's
// computation, lifted over whole arrays where it is scalar and elementwise,
// and typed loops where it is a plain binary op.
#include "eval/reduce.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "eval/elementwise.h"
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
using hlo::Shape;

// Calls visit(out, in) for each input element `in` inside the window of
// output element `out`, outputs row-major, each window row-major (padding
// and dilation holes skipped): the order every reduce-window folds in.
template <typename Visit>
void ForEachWindowElement(const HloInstruction& inst, Visit&& visit) {
  const auto& window = inst.attributes().Get<hlo::Window>(AttrKey::kWindow).dimensions;
  const std::vector<int64_t>& in_dims = inst.operand(0)->shape().dimensions();
  const auto in_strides = Strides(in_dims);
  std::vector<int64_t> window_sizes;
  for (const hlo::WindowDim& w : window) window_sizes.push_back(w.size);
  const Shape& out_shape = inst.shape().IsTuple() ? inst.shape().tuple_shapes(0) : inst.shape();
  ForEachIndex(out_shape.dimensions(), [&](const std::vector<int64_t>& out_idx,
                                           int64_t out_linear) {
    ForEachIndex(window_sizes, [&](const std::vector<int64_t>& w_idx, int64_t) {
      int64_t src = 0;
      for (size_t d = 0; d < window.size(); ++d) {
        const hlo::WindowDim& w = window[d];
        // Position in the padded, base-dilated input.
        const int64_t pos = out_idx[d] * w.stride + w_idx[d] * w.window_dilation - w.padding_low;
        if (pos < 0 || pos % w.base_dilation != 0) return;
        const int64_t i = pos / w.base_dilation;
        if (i >= in_dims[d]) return;
        src += i * in_strides[d];
      }
      visit(out_linear, src);
    });
  });
}

// Below this many independent calls, lifting a computation does not pay.
constexpr int64_t kMinLiftedBatch = 8;

template <typename T>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

// The sum of x[0..n) (n >= 1) by pairwise summation: halves summed
// separately, runs of up to 8 in order. Its rounding error grows with
// log n, not n: the order of magnitude of XLA:CPU's, whose vectorized
// loops keep many partial sums (2^25 float ones sum to 2^25, where one
// accumulator stops at 2^24). `round` rounds each partial sum (to a
// narrow type; the identity for native ones).
template <typename T, typename Round>
T PairwiseSum(const T* x, int64_t n, const Round& round) {
  if (n <= 8) {
    T s = x[0];
    for (int64_t i = 1; i < n; ++i) s = round(s + x[i]);
    return s;
  }
  const int64_t half = n / 2;
  return round(PairwiseSum(x, half, round) + PairwiseSum(x + half, n - half, round));
}

// acc[o] = round(acc[o] + pairwise sum of the inputs folding into o), for
// the inputs x and their outputs `target`.
template <typename T, typename Round>
void PairwiseReduce(T* acc, int64_t outputs, const T* x, const std::vector<int64_t>& target,
                    const Round& round) {
  const int64_t n = static_cast<int64_t>(target.size());
  if (n == 0) return;
  if (std::is_sorted(target.begin(), target.end())) {
    // Each output's inputs lie side by side (a reduction of minor dims).
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && target[j] == target[i]) ++j;
      acc[target[i]] = round(acc[target[i]] + PairwiseSum(x + i, j - i, round));
      i = j;
    }
    return;
  }
  // Gather each output's inputs, in row-major order, then sum each run.
  std::vector<int64_t> start(static_cast<size_t>(outputs) + 1, 0);
  for (int64_t t : target) ++start[t + 1];
  for (int64_t o = 0; o < outputs; ++o) start[o + 1] += start[o];
  std::vector<int64_t> next(start.begin(), start.end() - 1);
  std::vector<T> gathered(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) gathered[next[target[i]]++] = x[i];
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t count = start[o + 1] - start[o];
    if (count > 0) acc[o] = round(acc[o] + PairwiseSum(gathered.data() + start[o], count, round));
  }
}

class Reductions {
 public:
  explicit Reductions(Context& ctx) : ctx_(ctx) {}

  Literal Map(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
    const HloComputation* f = inst.attributes().Get<HloComputation*>(AttrKey::kToApply);
    Literal out = MakeLiteral(inst.shape().element_type(), inst.shape().dimensions());
    if (ctx_.Liftable(*f) && !ops.empty()) {
      std::vector<Literal> flat;
      for (const Literal* o : ops) flat.push_back(Reshaped(*o, {o->element_count()}));
      std::vector<const Literal*> args;
      for (const Literal& l : flat) args.push_back(&l);
      const Literal r = ctx_.CallLifted(*f, args, nullptr);
      out.mutable_bytes().assign(r.bytes().begin(), r.bytes().end());
      return out;
    }
    for (int64_t i = 0; i < out.element_count(); ++i) {
      std::vector<Literal> scalars;
      for (const Literal* o : ops) scalars.push_back(ElementAt(*o, i));
      std::vector<const Literal*> args;
      for (const Literal& s : scalars) args.push_back(&s);
      SetElement(out, i, ctx_.Call(*f, args));
    }
    return out;
  }

  Literal Reduce(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
    const size_t n = ops.size() / 2;
    const auto dims = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
    const HloComputation* f = inst.attributes().Get<HloComputation*>(AttrKey::kToApply);
    const std::vector<int64_t>& in_dims = ops[0]->shape().dimensions();
    std::vector<int64_t> out_dims;
    std::vector<bool> reduced(in_dims.size(), false);
    for (int64_t d : dims) reduced[d] = true;
    for (size_t i = 0; i < in_dims.size(); ++i) {
      if (!reduced[i]) out_dims.push_back(in_dims[i]);
    }
    // Output element each input element folds into.
    std::vector<int64_t> target(static_cast<size_t>(ops[0]->element_count()));
    const auto out_strides = Strides(out_dims);
    ForEachIndex(in_dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
      int64_t o = 0, k = 0;
      for (size_t i = 0; i < idx.size(); ++i) {
        if (!reduced[i]) o += idx[i] * out_strides[k++];
      }
      target[linear] = o;
    });
    const auto simple = n == 1 ? SimpleReducer(*f) : std::nullopt;
    const PrimitiveType t = ops[0]->shape().element_type();
    if (simple && !IsNarrowFloat(t) && t == ops[1]->shape().element_type()) {
      return FastReduce(*simple, *ops[0], *ops[1], out_dims, target);
    }
    if (simple == HloOpcode::kAdd && IsNarrowFloat(t) && t == ops[1]->shape().element_type()) {
      return NarrowSum(*ops[0], *ops[1], out_dims, target);
    }
    std::vector<Literal> acc;
    for (size_t j = 0; j < n; ++j) {
      Literal a = MakeLiteral(ops[n + j]->shape().element_type(), out_dims);
      for (int64_t i = 0; i < a.element_count(); ++i) SetElement(a, i, *ops[n + j]);
      acc.push_back(std::move(a));
    }
    const int64_t outputs = acc[0].element_count();
    if (outputs >= kMinLiftedBatch && ctx_.Liftable(*f)) {
      LiftedReduce(*f, ops, target, acc);
      for (Literal& a : acc) a = Reshaped(a, out_dims);
    } else {
      for (int64_t i = 0; i < static_cast<int64_t>(target.size()); ++i) {
        std::vector<Literal> args;
        for (size_t j = 0; j < n; ++j) args.push_back(ElementAt(acc[j], target[i]));
        for (size_t j = 0; j < n; ++j) args.push_back(ElementAt(*ops[j], i));
        std::vector<const Literal*> ptrs;
        for (const Literal& a : args) ptrs.push_back(&a);
        Literal r = ctx_.Call(*f, ptrs);
        if (n == 1) {
          SetElement(acc[0], target[i], r);
        } else {
          for (size_t j = 0; j < n; ++j) SetElement(acc[j], target[i], r.tuple_elements()[j]);
        }
      }
    }
    return n == 1 ? std::move(acc[0]) : TupleOf(std::move(acc));
  }

  // The generic reduce with the reducer lifted over all outputs: step k folds
  // every output's k-th input (in row-major order, as the scalar path does).
  void LiftedReduce(const HloComputation& f, const std::vector<const Literal*>& ops,
                    const std::vector<int64_t>& target, std::vector<Literal>& acc) {
    const size_t n = acc.size();
    const int64_t outputs = acc[0].element_count();
    const int64_t steps = static_cast<int64_t>(target.size()) / outputs;
    // sources[k * outputs + o]: the input element output o folds at step k.
    std::vector<int64_t> sources(target.size());
    std::vector<int64_t> seen(static_cast<size_t>(outputs), 0);
    for (int64_t i = 0; i < static_cast<int64_t>(target.size()); ++i)
      sources[seen[target[i]]++ * outputs + target[i]] = i;
    for (Literal& a : acc) a = Reshaped(a, {outputs});
    std::vector<Literal> xs;
    for (size_t j = 0; j < n; ++j)
      xs.push_back(MakeLiteral(ops[j]->shape().element_type(), {outputs}));
    for (int64_t k = 0; k < steps; ++k) {
      for (size_t j = 0; j < n; ++j) {
        for (int64_t o = 0; o < outputs; ++o)
          CopyElement(*ops[j], sources[k * outputs + o], xs[j], o);
      }
      std::vector<const Literal*> args;
      for (const Literal& a : acc) args.push_back(&a);
      for (const Literal& x : xs) args.push_back(&x);
      Literal r = ctx_.CallLifted(f, args, nullptr);
      if (n == 1) {
        acc[0] = std::move(r);
      } else {
        for (size_t j = 0; j < n; ++j) acc[j] = std::move(r.mutable_tuple_elements()[j]);
      }
    }
  }

  // reduce-window: each output element folds the input elements its window
  // covers, in row-major window order; positions in padding or between
  // dilated base elements are skipped (they hold the init value).
  Literal ReduceWindow(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
    const size_t n = ops.size() / 2;
    const HloComputation* f = inst.attributes().Get<HloComputation*>(AttrKey::kToApply);
    const Shape& out_shape = n == 1 ? inst.shape() : inst.shape().tuple_shapes(0);
    std::vector<Literal> acc;
    for (size_t j = 0; j < n; ++j) {
      Literal a = MakeLiteral(ops[n + j]->shape().element_type(), out_shape.dimensions());
      for (int64_t i = 0; i < a.element_count(); ++i) SetElement(a, i, *ops[n + j]);
      acc.push_back(std::move(a));
    }
    const std::optional<HloOpcode> simple = n == 1 ? SimpleReducer(*f) : std::nullopt;
    const PrimitiveType t = ops[0]->shape().element_type();
    if (simple.has_value() && !IsNarrowFloat(t) && t == ops[1]->shape().element_type()) {
      // A plain binary reducer: typed loops on the bytes.
      ReduceWindowBuffers(inst, ops[0]->bytes().data(), ops[1]->bytes().data(),
                          acc[0].mutable_bytes().data());
      NormalizeSubByte(acc[0]);
      return std::move(acc[0]);
    }
    ForEachWindowElement(inst, [&](int64_t out_linear, int64_t src) {
      {
        std::vector<Literal> args;
        for (size_t j = 0; j < n; ++j) args.push_back(ElementAt(acc[j], out_linear));
        for (size_t j = 0; j < n; ++j) args.push_back(ElementAt(*ops[j], src));
        std::vector<const Literal*> ptrs;
        for (const Literal& l : args) ptrs.push_back(&l);
        Literal r = ctx_.Call(*f, ptrs);
        if (n == 1) {
          SetElement(acc[0], out_linear, r);
        } else {
          for (size_t j = 0; j < n; ++j) SetElement(acc[j], out_linear, r.tuple_elements()[j]);
        }
      }
    });
    return n == 1 ? std::move(acc[0]) : TupleOf(std::move(acc));
  }

  // Reduction with a plain binary reducer, as typed loops. Floating-point
  // sums are pairwise (PairwiseSum). Every other fold takes each output's
  // inputs in row-major order, like the generic path, so both agree bit
  // for bit; runs of inputs that go to one output fold in one kernel call,
  // runs that go to consecutive outputs combine elementwise.
  Literal FastReduce(HloOpcode op, const Literal& in, const Literal& init,
                     const std::vector<int64_t>& out_dims, const std::vector<int64_t>& target) {
    Literal out = MakeLiteral(in.shape().element_type(), out_dims);
    DispatchNative(in.shape().element_type(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* acc = MutableData<T>(out);
      const T* x = Data<T>(in);
      const T start = Data<T>(init)[0];
      for (int64_t i = 0; i < out.element_count(); ++i) acc[i] = start;
      if constexpr (std::is_floating_point_v<T> || kIsComplex<T>) {
        if (op == HloOpcode::kAdd) {
          PairwiseReduce(acc, out.element_count(), x, target, [](T v) { return v; });
          return;
        }
      }
      const size_t n = target.size();
      size_t i = 0;
      while (i < n) {
        size_t j = i + 1;
        if (j < n && target[j] == target[i]) {
          while (j < n && target[j] == target[i]) ++j;
          FoldKernel<T>(op, acc + target[i], x + i, static_cast<int64_t>(j - i));
        } else {
          while (j < n && target[j] == target[j - 1] + 1) ++j;
          BinaryKernel<T>(op, acc + target[i], x + i, acc + target[i], static_cast<int64_t>(j - i));
        }
        i = j;
      }
    });
    NormalizeSubByte(out);
    return out;
  }

  // A sum in a narrow float type (f16, bf16, f8): pairwise, each partial
  // sum rounded to the type as a kernel adding in that type would.
  Literal NarrowSum(const Literal& in, const Literal& init, const std::vector<int64_t>& out_dims,
                    const std::vector<int64_t>& target) {
    const PrimitiveType t = in.shape().element_type();
    const Literal x = WidenToF32(in);
    Literal acc = MakeLiteral(PrimitiveType::kF32, out_dims);
    const float start = Data<float>(WidenToF32(init))[0];
    float* a = MutableData<float>(acc);
    for (int64_t i = 0; i < acc.element_count(); ++i) a[i] = start;
    PairwiseReduce(a, acc.element_count(), Data<float>(x), target,
                   [t](float v) { return DecodeNarrowFloat(t, EncodeNarrowFloat(t, v)); });
    return NarrowFromF32(acc, t);
  }

 private:
  Context& ctx_;
};

}  // namespace

Literal Map(Context& ctx, const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  return Reductions(ctx).Map(inst, ops);
}

Literal Reduce(Context& ctx, const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  return Reductions(ctx).Reduce(inst, ops);
}

Literal ReduceWindow(Context& ctx, const HloInstruction& inst,
                     const std::vector<const Literal*>& ops) {
  return Reductions(ctx).ReduceWindow(inst, ops);
}

void ReduceWindowBuffers(const HloInstruction& inst, const uint8_t* in, const uint8_t* init,
                         uint8_t* out) {
  const HloOpcode op = *SimpleReducer(*inst.attributes().Get<HloComputation*>(AttrKey::kToApply));
  DispatchNative(inst.operand(0)->shape().element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* acc = reinterpret_cast<T*>(out);
    const T* x = reinterpret_cast<const T*>(in);
    T start;
    std::memcpy(&start, init, sizeof(T));
    std::fill(acc, acc + inst.shape().element_count(), start);
    ForEachWindowElement(inst, [&](int64_t o, int64_t i) { FoldKernel<T>(op, acc + o, x + i, 1); });
  });
}

}  // namespace uir::eval
