#include "passes/scatter_expander.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <vector>

#include "eval/context.h"
#include "hlo/builder.h"
#include "passes/scalar_inline.h"

namespace uir::passes {
namespace {

using hlo::AttrKey;
using hlo::ComparisonDirection;
using hlo::ComputationBuilder;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

std::vector<int64_t> List(const HloInstruction& s, AttrKey key) {
  return s.attributes().GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Whether the runtime's scatter loop combines with `f`: the update itself,
// or one add, multiply, maximum, minimum, and or or of the two parameters.
bool RuntimeCombiner(const HloComputation& f) {
  const HloInstruction* r = f.root();
  if (f.num_parameters() == 2 && r->opcode() == HloOpcode::kParameter) {
    return r->parameter_number() == 1;
  }
  return eval::SimpleReducer(f).has_value();
}

bool Expandable(const HloInstruction& s) {
  if (s.opcode() != HloOpcode::kScatter || s.is_removed()) return false;
  if (!s.control_predecessors().empty() || !s.control_successors().empty()) return false;
  const int64_t n = (s.operand_count() - 1) / 2;
  const auto* f = s.attributes().Get<HloComputation*>(AttrKey::kToApply);
  if (!IsScalarElementwise(*f, /*tuple_root=*/n > 1)) return false;
  if (n == 1 && RuntimeCombiner(*f)) return false;
  for (const HloInstruction* o : s.operands()) {
    if (!o->shape().IsArray()) return false;
  }
  return true;
}

HloInstruction* Transpose(ComputationBuilder& b, HloInstruction* x,
                          const std::vector<int64_t>& perm) {
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return x;
  std::vector<int64_t> moved;
  for (int64_t d : perm) moved.push_back(x->shape().dimensions(d));
  hlo::AttributeMap attrs;
  attrs.Set(AttrKey::kDimensions, perm);
  return b.Add(HloOpcode::kTranspose, {x}, std::move(attrs),
               Shape(x->shape().element_type(), std::move(moved)));
}

HloInstruction* DynamicSlice(ComputationBuilder& b, HloInstruction* x,
                             const std::vector<HloInstruction*>& starts,
                             std::vector<int64_t> sizes) {
  std::vector<HloInstruction*> operands = {x};
  operands.insert(operands.end(), starts.begin(), starts.end());
  hlo::AttributeMap attrs;
  attrs.Set(AttrKey::kDynamicSliceSizes, sizes);
  return b.Add(HloOpcode::kDynamicSlice, operands, std::move(attrs),
               Shape(x->shape().element_type(), std::move(sizes)));
}

HloInstruction* Reshape(ComputationBuilder& b, HloInstruction* x, std::vector<int64_t> dims) {
  return x->shape().dimensions() == dims ? x : b.Reshape(x, std::move(dims));
}

HloInstruction* Scalar(ComputationBuilder& b, PrimitiveType type, double value) {
  return b.Constant(hlo::ScalarLiteral(type, value));
}

// The scatter as a loop; returns the value that replaces it.
HloInstruction* Expand(HloInstruction* s) {
  HloComputation* c = s->parent();
  hlo::HloModule& module = *c->parent();
  ComputationBuilder b(c);
  const HloComputation& f = *s->attributes().Get<HloComputation*>(AttrKey::kToApply);
  const size_t n = static_cast<size_t>((s->operand_count() - 1) / 2);
  std::vector<HloInstruction*> operands, updates;
  for (size_t k = 0; k < n; ++k) {
    operands.push_back(s->operand(static_cast<int64_t>(k)));
    updates.push_back(s->operand(static_cast<int64_t>(n + 1 + k)));
  }
  HloInstruction* indices = s->operand(static_cast<int64_t>(n));
  const std::vector<int64_t> window_dims = List(*s, AttrKey::kUpdateWindowDims);
  const std::vector<int64_t> inserted = List(*s, AttrKey::kInsertedWindowDims);
  const std::vector<int64_t> input_batching = List(*s, AttrKey::kInputBatchingDims);
  const std::vector<int64_t> indices_batching = List(*s, AttrKey::kScatterIndicesBatchingDims);
  std::vector<int64_t> start_of = List(*s, AttrKey::kScatterDimsToOperandDims);
  int64_t ivd = s->attributes().Get<int64_t>(AttrKey::kIndexVectorDim);
  const Shape& os = operands[0]->shape();
  const int64_t rank = os.rank();
  auto result = [&](const std::vector<HloInstruction*>& values) {
    return n == 1 ? values[0] : b.Tuple(values);
  };

  // The index vectors as the rows of [N, K]: the batch coordinate of each
  // batching dimension appended to its vector, the vector dimension last.
  const PrimitiveType index_type = indices->shape().element_type();
  if (ivd == indices->shape().rank()) {
    std::vector<int64_t> dims = indices->shape().dimensions();
    dims.push_back(1);
    indices = b.Reshape(indices, dims);
  }
  if (!input_batching.empty()) {
    std::vector<HloInstruction*> parts = {indices};
    std::vector<int64_t> one = indices->shape().dimensions();
    one[static_cast<size_t>(ivd)] = 1;
    for (size_t k = 0; k < input_batching.size(); ++k) {
      hlo::AttributeMap attrs;
      attrs.Set(AttrKey::kIotaDimension, indices_batching[k]);
      parts.push_back(b.Add(HloOpcode::kIota, {}, std::move(attrs), Shape(index_type, one)));
      start_of.push_back(input_batching[k]);
    }
    std::vector<int64_t> dims = indices->shape().dimensions();
    dims[static_cast<size_t>(ivd)] += static_cast<int64_t>(input_batching.size());
    hlo::AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, std::vector<int64_t>{ivd});
    indices = b.Add(HloOpcode::kConcatenate, parts, std::move(attrs), Shape(index_type, dims));
  }
  std::vector<int64_t> perm;
  int64_t count = 1;
  for (int64_t d = 0; d < indices->shape().rank(); ++d) {
    if (d == ivd) continue;
    perm.push_back(d);
    count *= indices->shape().dimensions(d);
  }
  perm.push_back(ivd);
  const int64_t vector = indices->shape().dimensions(ivd);
  if (count == 0) return result(operands);  // no updates: the operands as they are
  indices = Reshape(b, Transpose(b, indices, perm), {count, vector});

  // Each operand's updates as [N, window], the window of operand rank.
  const Shape& us = updates[0]->shape();
  std::vector<int64_t> update_perm, window_sizes;
  for (int64_t d = 0; d < us.rank(); ++d) {
    if (!Contains(window_dims, d)) update_perm.push_back(d);
  }
  for (int64_t d = 0; d < us.rank(); ++d) {
    if (!Contains(window_dims, d)) continue;
    update_perm.push_back(d);
    window_sizes.push_back(us.dimensions(d));
  }
  std::vector<int64_t> window;
  size_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    const bool one = Contains(inserted, d) || Contains(input_batching, d);
    window.push_back(one ? 1 : window_sizes.at(next++));
  }
  if (std::find(window.begin(), window.end(), 0) != window.end()) {
    return result(operands);  // empty windows: nothing to combine
  }
  std::vector<int64_t> rows = {count};
  rows.insert(rows.end(), window.begin(), window.end());
  for (HloInstruction*& u : updates) u = Reshape(b, Transpose(b, u, update_perm), rows);

  // The loop state: (step, operands..., indices, updates...).
  const PrimitiveType step_type =
      count > std::numeric_limits<int32_t>::max() ? PrimitiveType::kS64 : PrimitiveType::kS32;
  std::vector<HloInstruction*> init = {Scalar(b, step_type, 0)};
  init.insert(init.end(), operands.begin(), operands.end());
  init.push_back(indices);
  init.insert(init.end(), updates.begin(), updates.end());
  std::vector<Shape> parts;
  for (const HloInstruction* x : init) parts.push_back(x->shape());
  const Shape state = Shape::Tuple(parts);

  ComputationBuilder cond(module.UniqueComputationName("scatter_condition"));
  {
    HloInstruction* p = cond.Parameter(0, state, "state");
    cond.Compare(cond.GetTupleElement(p, 0), Scalar(cond, step_type, static_cast<double>(count)),
                 ComparisonDirection::kLt);
  }
  HloComputation* condition = module.AddComputation(cond.Build());

  // The body: built with its parameter, then grown in place (the
  // combiner is written out into it).
  ComputationBuilder head(module.UniqueComputationName("scatter_body"));
  HloInstruction* p = head.Parameter(0, state, "state");
  HloComputation* body = module.AddComputation(head.Build(p));
  ComputationBuilder bb(body);
  HloInstruction* step = bb.GetTupleElement(p, 0);
  std::vector<HloInstruction*> current, update_rows;
  for (size_t k = 0; k < n; ++k) {
    current.push_back(bb.GetTupleElement(p, static_cast<int64_t>(1 + k)));
    update_rows.push_back(bb.GetTupleElement(p, static_cast<int64_t>(n + 2 + k)));
  }
  HloInstruction* index_rows = bb.GetTupleElement(p, static_cast<int64_t>(n + 1));
  HloInstruction* step_zero = Scalar(bb, step_type, 0);
  HloInstruction* zero = Scalar(bb, PrimitiveType::kS64, 0);
  std::vector<HloInstruction*> starts(static_cast<size_t>(rank), zero);
  HloInstruction* fits = nullptr;
  if (vector > 0) {
    HloInstruction* row = DynamicSlice(bb, index_rows, {step, step_zero}, {1, vector});
    for (int64_t k = 0; k < vector; ++k) {
      hlo::AttributeMap attrs;
      attrs.Set(AttrKey::kSlice, std::vector<hlo::SliceRange>{{0, 1, 1}, {k, k + 1, 1}});
      HloInstruction* one =
          bb.Add(HloOpcode::kSlice, {row}, std::move(attrs), Shape(index_type, {1, 1}));
      HloInstruction* start = bb.Convert(bb.Reshape(one, {}), PrimitiveType::kS64);
      const int64_t d = start_of.at(static_cast<size_t>(k));
      starts[static_cast<size_t>(d)] = start;
      // A window that does not fit is skipped (dynamic-slice would clamp).
      HloInstruction* last =
          Scalar(bb, PrimitiveType::kS64,
                 static_cast<double>(os.dimensions(d) - window[static_cast<size_t>(d)]));
      HloInstruction* ok =
          bb.Binary(HloOpcode::kAnd, bb.Compare(start, zero, ComparisonDirection::kGe),
                    bb.Compare(start, last, ComparisonDirection::kLe));
      fits = fits == nullptr ? ok : bb.Binary(HloOpcode::kAnd, fits, ok);
    }
  }
  // Old values first, then update row `step`'s: the combiner's parameters.
  std::vector<HloInstruction*> row_starts(rows.size(), step_zero);
  row_starts[0] = step;
  std::vector<int64_t> one_row = rows;
  one_row[0] = 1;
  std::vector<HloInstruction*> old, args;
  for (size_t k = 0; k < n; ++k) old.push_back(DynamicSlice(bb, current[k], starts, window));
  args = old;
  for (size_t k = 0; k < n; ++k) {
    args.push_back(bb.Reshape(DynamicSlice(bb, update_rows[k], row_starts, one_row), window));
  }
  std::vector<HloInstruction*> combined =
      InlineScalar(f, args, Shape(os.element_type(), window), body);
  std::vector<HloInstruction*> out = {bb.Binary(HloOpcode::kAdd, step, Scalar(bb, step_type, 1))};
  for (size_t k = 0; k < n; ++k) {
    HloInstruction* value = combined[k];
    if (fits != nullptr) {
      HloInstruction* mask = bb.Broadcast(fits, window, {});
      value = bb.Add(HloOpcode::kSelect, {mask, value, old[k]});
    }
    std::vector<HloInstruction*> dus = {current[k], value};
    dus.insert(dus.end(), starts.begin(), starts.end());
    out.push_back(bb.Add(HloOpcode::kDynamicUpdateSlice, dus));
  }
  out.push_back(index_rows);
  out.insert(out.end(), update_rows.begin(), update_rows.end());
  body->set_root(bb.Tuple(out));

  hlo::AttributeMap attrs;
  attrs.Set(AttrKey::kCondition, condition);
  attrs.Set(AttrKey::kBody, body);
  HloInstruction* loop = b.Add(HloOpcode::kWhile, {b.Tuple(init)}, std::move(attrs), state);
  std::vector<HloInstruction*> results;
  for (size_t k = 0; k < n; ++k) {
    results.push_back(b.GetTupleElement(loop, static_cast<int64_t>(1 + k)));
  }
  return result(results);
}

}  // namespace

bool ScatterExpander::Run(hlo::HloModule& module) {
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* s : c->MakeInstructionPostOrder()) {
      if (!Expandable(*s)) continue;
      c->ReplaceInstruction(s, Expand(s));
      changed = true;
    }
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
