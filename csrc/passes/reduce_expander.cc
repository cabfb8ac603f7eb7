#include "passes/reduce_expander.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "eval/context.h"
#include "hlo/builder.h"
#include "passes/scalar_inline.h"

namespace uir::passes {
namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Runs folded per level: up to this many, each a copy of the reducer in
// the level's kernel.
constexpr int64_t kRunsPerLevel = 16;

bool Expandable(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kReduce || r.is_removed()) return false;
  if (!r.control_predecessors().empty() || !r.control_successors().empty()) return false;
  const auto* f = r.attributes().Get<HloComputation*>(AttrKey::kToApply);
  const int64_t n = r.operand_count() / 2;
  if (!IsScalarElementwise(*f, /*tuple_root=*/n > 1)) return false;
  if (n == 1) {
    // Kernels fold one op; of complex values, only a sum (part by part).
    const std::optional<HloOpcode> op = eval::KernelFoldReducer(*f);
    if (op && (*op == HloOpcode::kAdd || !IsComplex(r.shape().element_type()))) return false;
  }
  const auto& dims = r.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
  if (n == 2 && dims.size() == 1 && r.operand(1)->opcode() == HloOpcode::kIota &&
      r.operand(1)->attributes().Get<int64_t>(AttrKey::kIotaDimension) == dims[0]) {
    return false;
  }
  for (int64_t k = 0; k < n; ++k) {
    if (!r.operand(k)->shape().IsArray()) return false;
  }
  return true;
}

HloInstruction* Slice(hlo::ComputationBuilder& b, HloInstruction* x,
                      std::vector<hlo::SliceRange> ranges, std::vector<int64_t> dims) {
  hlo::AttributeMap attrs;
  attrs.Set(AttrKey::kSlice, std::move(ranges));
  return b.Add(HloOpcode::kSlice, {x}, std::move(attrs),
               hlo::Shape(x->shape().element_type(), std::move(dims)));
}

// The reduce written out; returns the value that replaces it.
HloInstruction* Expand(HloInstruction* r) {
  HloComputation* c = r->parent();
  hlo::ComputationBuilder b(c);
  const HloComputation& f = *r->attributes().Get<HloComputation*>(AttrKey::kToApply);
  const size_t n = static_cast<size_t>(r->operand_count() / 2);
  const auto& reduced = r->attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
  const hlo::Shape& in = r->operand(0)->shape();
  std::vector<int64_t> perm, kept_dims;
  int64_t kept = 1, length = 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    perm.push_back(d);
    kept_dims.push_back(in.dimensions(d));
    kept *= in.dimensions(d);
  }
  std::vector<int64_t> sorted = reduced;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t d : sorted) {
    perm.push_back(d);
    length *= in.dimensions(d);
  }
  bool identity = true;
  for (size_t k = 0; k < perm.size(); ++k)
    identity = identity && perm[k] == static_cast<int64_t>(k);
  if (kept == 0 || length == 0) {  // nothing to fold: init, or an empty result
    std::vector<HloInstruction*> out;
    for (size_t k = 0; k < n; ++k) {
      const hlo::Shape& want =
          r->shape().IsTuple() ? r->shape().tuple_shapes(static_cast<int64_t>(k)) : r->shape();
      out.push_back(b.Broadcast(r->operand(static_cast<int64_t>(n + k)), want.dimensions(), {}));
      out.back()->mutable_shape() = want;
    }
    return n == 1 ? out[0] : b.Tuple(out);
  }
  // Each operand as [kept, length].
  std::vector<HloInstruction*> values(n), inits(n);
  for (size_t k = 0; k < n; ++k) {
    HloInstruction* x = r->operand(static_cast<int64_t>(k));
    inits[k] = r->operand(static_cast<int64_t>(n + k));
    if (!identity) {
      std::vector<int64_t> moved;
      for (int64_t d : perm) moved.push_back(x->shape().dimensions(d));
      hlo::AttributeMap attrs;
      attrs.Set(AttrKey::kDimensions, perm);
      x = b.Add(HloOpcode::kTranspose, {x}, std::move(attrs),
                hlo::Shape(x->shape().element_type(), moved));
    }
    values[k] = b.Reshape(x, {kept, length});
  }
  bool first = true;
  do {
    const int64_t m = length <= kRunsPerLevel ? 1 : (length + kRunsPerLevel - 1) / kRunsPerLevel;
    const int64_t runs = (length + m - 1) / m;
    const hlo::Shape level(PrimitiveType::kF32, {kept, m});
    std::vector<std::vector<HloInstruction*>> run(static_cast<size_t>(runs));
    for (size_t k = 0; k < n; ++k) {
      HloInstruction* v = values[k];
      const PrimitiveType t = v->shape().element_type();
      if (runs * m > length) {  // the tail run filled with init
        hlo::PaddingConfig padding(2);
        padding[1].high = runs * m - length;
        hlo::AttributeMap attrs;
        attrs.Set(AttrKey::kPadding, std::move(padding));
        v = b.Add(HloOpcode::kPad, {v, inits[k]}, std::move(attrs),
                  hlo::Shape(t, {kept, runs * m}));
      }
      for (int64_t j = 0; j < runs; ++j) {
        run[static_cast<size_t>(j)].push_back(
            Slice(b, v, {{0, kept, 1}, {j * m, (j + 1) * m, 1}}, {kept, m}));
      }
    }
    // The first level folds from init, every element in turn the
    // reducer's second argument (in order, for rows of up to 16: the
    // evaluator's order exactly); later levels fold partial results.
    std::vector<HloInstruction*> acc = run[0];
    size_t j0 = 1;
    if (first) {
      acc.clear();
      for (size_t k = 0; k < n; ++k) acc.push_back(b.Broadcast(inits[k], {kept, m}, {}));
      j0 = 0;
      first = false;
    }
    for (size_t j = j0; j < run.size(); ++j) {
      std::vector<HloInstruction*> args = acc;
      args.insert(args.end(), run[j].begin(), run[j].end());
      acc = InlineScalar(f, args, level, c);
    }
    length = m;
    values = acc;
    if (length > 1) {
      // One kernel per level: the next level's reads of this one stay
      // reads of memory, not a copy of this level's code per run.
      HloInstruction* barrier = b.Add(HloOpcode::kOptimizationBarrier, {b.Tuple(values)});
      for (size_t k = 0; k < n; ++k) {
        values[k] = b.GetTupleElement(barrier, static_cast<int64_t>(k));
      }
    }
  } while (length > 1);
  std::vector<HloInstruction*> out = values;
  for (size_t k = 0; k < n; ++k) {
    const hlo::Shape& want =
        r->shape().IsTuple() ? r->shape().tuple_shapes(static_cast<int64_t>(k)) : r->shape();
    out[k] = b.Reshape(out[k], want.dimensions());
    out[k]->mutable_shape() = want;
  }
  return n == 1 ? out[0] : b.Tuple(out);
}

}  // namespace

bool ReduceExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* r : c->MakeInstructionPostOrder()) {
      if (!Expandable(*r)) continue;
      c->ReplaceInstruction(r, Expand(r));
      changed = true;
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
