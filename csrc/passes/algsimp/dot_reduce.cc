// algsimp, dot and reduce family: dots that contract nothing become
// multiplies, transposes of dot operands fold into the dot; reductions of broadcasts and reductions
// over nothing go away.
#include <algorithm>
#include <numeric>

#include "hlo/module.h"
#include "hlo/pattern_matcher.h"
#include "hlo/reduction_kind.h"
#include "passes/algsimp/algsimp.h"
#include "support/float_format.h"

namespace uir::passes::algsimp {
namespace {

using hlo::AttributeMap;
using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;

const std::vector<int64_t>& IntList(const HloInstruction* i, AttrKey key) {
  static const std::vector<int64_t> kEmpty;
  const auto* v = i->attributes().Find(key);
  return v ? std::get<std::vector<int64_t>>(*v) : kEmpty;
}

// Places `x` (an operand of a dot, converted to `type`) in the dot's result
// shape: its contracting dimensions (all of size 1) dropped, the rest moved
// to `result_pos` (one entry per dimension of x; -1 for contracting ones)
// and broadcast along the other side's dimensions.
HloInstruction* Arrange(HloInstruction* x, PrimitiveType type,
                        const std::vector<int64_t>& result_pos, const hlo::Shape& result,
                        hlo::ComputationBuilder& b) {
  if (x->shape().element_type() != type) x = b.Convert(x, type);
  std::vector<int64_t> kept_dims, kept_pos;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (result_pos[d] < 0) continue;
    kept_dims.push_back(x->shape().dimensions(d));
    kept_pos.push_back(result_pos[d]);
  }
  if (static_cast<int64_t>(kept_dims.size()) != x->shape().rank()) x = b.Reshape(x, kept_dims);
  std::vector<int64_t> perm(kept_pos.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(),
            [&](int64_t a, int64_t c) { return kept_pos[a] < kept_pos[c]; });
  if (!std::is_sorted(kept_pos.begin(), kept_pos.end())) {
    std::vector<int64_t> dims, pos;
    for (int64_t p : perm) {
      dims.push_back(kept_dims[p]);
      pos.push_back(kept_pos[p]);
    }
    AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, perm);
    x = b.Add(HloOpcode::kTranspose, {x}, std::move(attrs));
    kept_pos = std::move(pos);
  }
  return b.Broadcast(x, result.dimensions(), kept_pos);
}

// A dot whose contracting dimensions hold one element (or that has none) is
// an elementwise product of its operands broadcast to the result: exact.
HloInstruction* DotWithoutContraction(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kDot || i->operand_count() != 2) return nullptr;
  const hlo::Shape& out = i->shape();
  const PrimitiveType type = out.element_type();
  if (!(IsFloat(type) || IsInteger(type))) return nullptr;
  HloInstruction* lhs = i->operand(0);
  HloInstruction* rhs = i->operand(1);
  const auto& lb = IntList(i, AttrKey::kLhsBatchDims);
  const auto& lc = IntList(i, AttrKey::kLhsContractingDims);
  const auto& rb = IntList(i, AttrKey::kRhsBatchDims);
  const auto& rc = IntList(i, AttrKey::kRhsContractingDims);
  for (int64_t d : lc) {
    if (lhs->shape().dimensions(d) != 1) return nullptr;
  }
  // Positions in the result: batch dims first, then lhs free, then rhs free.
  const auto batch = static_cast<int64_t>(lb.size());
  std::vector<int64_t> lpos(lhs->shape().rank(), -2), rpos(rhs->shape().rank(), -2);
  for (int64_t d : lc) lpos[d] = -1;
  for (int64_t d : rc) rpos[d] = -1;
  for (int64_t k = 0; k < batch; ++k) {
    lpos[lb[k]] = k;
    rpos[rb[k]] = k;
  }
  int64_t next = batch;
  for (auto& p : lpos) {
    if (p == -2) p = next++;
  }
  for (auto& p : rpos) {
    if (p == -2) p = next++;
  }
  if (next != out.rank()) return nullptr;
  HloInstruction* l = Arrange(lhs, type, lpos, out, b);
  HloInstruction* r = Arrange(rhs, type, rpos, out, b);
  return b.Add(HloOpcode::kMultiply, {l, r}, {}, out);
}

// dot(transpose(x), y) and dot(x, transpose(y)) read x itself, with the
// dot's dimension numbers taken through the permutation (XLA's transpose
// folding): the transpose's copy is never made. Only where the operand's
// free dimensions keep their order (so the result is the same array) and
// its batch dimensions stay leading and in order (the form a GEMM runs).
// Exact.
HloInstruction* DotOfTranspose(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kDot || i->operand_count() != 2) return nullptr;
  HloInstruction* operands[2] = {i->operand(0), i->operand(1)};
  const AttrKey batch_key[2] = {AttrKey::kLhsBatchDims, AttrKey::kRhsBatchDims};
  const AttrKey contract_key[2] = {AttrKey::kLhsContractingDims, AttrKey::kRhsContractingDims};
  hlo::AttributeMap attrs = i->attributes();
  bool folded = false;
  for (int side = 0; side < 2; ++side) {
    HloInstruction* t = operands[side];
    if (t->opcode() != HloOpcode::kTranspose) continue;
    const std::vector<int64_t>& perm = IntList(t, AttrKey::kDimensions);
    const std::vector<int64_t>& batch = IntList(i, batch_key[side]);
    const std::vector<int64_t>& contract = IntList(i, contract_key[side]);
    // Dimension d of transpose(x) is dimension perm[d] of x.
    std::vector<int64_t> new_batch, new_contract, free_after;
    for (int64_t d : batch) new_batch.push_back(perm[d]);
    for (int64_t d : contract) new_contract.push_back(perm[d]);
    for (int64_t d = 0; d < t->shape().rank(); ++d) {
      const bool is_free = std::find(batch.begin(), batch.end(), d) == batch.end() &&
                           std::find(contract.begin(), contract.end(), d) == contract.end();
      if (is_free) free_after.push_back(perm[d]);
    }
    if (!std::is_sorted(free_after.begin(), free_after.end())) continue;
    bool leading = true;
    for (size_t k = 0; k < new_batch.size(); ++k) leading = leading && new_batch[k] == int64_t(k);
    if (!leading) continue;
    if (!new_batch.empty()) attrs.Set(batch_key[side], new_batch);
    attrs.Set(contract_key[side], new_contract);
    operands[side] = t->operand(0);
    folded = true;
  }
  if (!folded) return nullptr;
  return b.Add(HloOpcode::kDot, {operands[0], operands[1]}, std::move(attrs), i->shape());
}

// The value `op` leaves unchanged, for `type`, if it has one we can test
// (hlo/reduction_kind.h), as a number.
std::optional<double> IdentityOf(HloOpcode op, PrimitiveType type) {
  const std::optional<hlo::ReductionKind> kind = hlo::ReductionKindOf(op);
  if (!kind || IsComplex(type)) return std::nullopt;
  const std::optional<hlo::Literal> id = hlo::ReductionIdentity(*kind, type);
  if (!id) return std::nullopt;
  if (IsFloat(type)) return id->GetDouble(0);
  return IsUnsigned(type) ? static_cast<double>(id->GetUint64(0))
                          : static_cast<double>(id->GetInt64(0));
}

// reduce over no dimensions with the reducer's identity as init -> operand.
HloInstruction* ReduceNothing(HloInstruction* i, hlo::ComputationBuilder&) {
  if (i->opcode() != HloOpcode::kReduce || i->operand_count() != 2) return nullptr;
  if (!IntList(i, AttrKey::kDimensions).empty()) return nullptr;
  const auto* reducer = i->attributes().Get<hlo::HloComputation*>(AttrKey::kToApply);
  auto op = ReducerOpcode(*reducer);
  if (!op) return nullptr;
  auto id = IdentityOf(*op, i->shape().element_type());
  if (!id || !hlo::IsConstantWithValue(*i->operand(1), *id)) return nullptr;
  return i->operand(0)->shape() == i->shape() ? i->operand(0) : nullptr;
}

// reduce(broadcast(x)) over only broadcast-added dimensions: for max, min,
// and, or the result is op(x, init) (x alone when init is the identity);
// for add with init 0 it is x * count (this one rounds differently from a
// sequential sum: reassociation).
HloInstruction* ReduceOfBroadcast(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kReduce || i->operand_count() != 2) return nullptr;
  HloInstruction* bc = i->operand(0);
  if (bc->opcode() != HloOpcode::kBroadcast) return nullptr;
  const auto& reduced = IntList(i, AttrKey::kDimensions);
  const auto& bdims = IntList(bc, AttrKey::kDimensions);
  if (reduced.empty()) return nullptr;
  int64_t count = 1;
  for (int64_t r : reduced) {
    if (std::find(bdims.begin(), bdims.end(), r) != bdims.end()) return nullptr;
    count *= bc->shape().dimensions(r);
  }
  if (count == 0) return nullptr;
  const auto* reducer = i->attributes().Get<hlo::HloComputation*>(AttrKey::kToApply);
  auto op = ReducerOpcode(*reducer);
  if (!op || *op == HloOpcode::kMultiply) return nullptr;
  const PrimitiveType type = i->shape().element_type();
  HloInstruction* init = i->operand(1);
  auto id = IdentityOf(*op, type);
  const bool init_is_identity = id && hlo::IsConstantWithValue(*init, *id);
  if (*op == HloOpcode::kAdd && !init_is_identity) return nullptr;
  // x's dimensions in the result: each broadcast dimension shifted down by
  // the reduced dimensions before it.
  HloInstruction* x = bc->operand(0);
  std::vector<int64_t> pos;
  for (int64_t d : bdims) {
    pos.push_back(d -
                  std::count_if(reduced.begin(), reduced.end(), [&](int64_t r) { return r < d; }));
  }
  HloInstruction* arranged = x;
  if (!(x->shape() == i->shape())) {
    AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, pos);
    arranged = b.Add(HloOpcode::kBroadcast, {x}, std::move(attrs), i->shape());
  }
  if (*op == HloOpcode::kAdd) {
    if (count == 1) return arranged;
    return b.Add(HloOpcode::kMultiply, {arranged, SplatLike(i, static_cast<double>(count), b)}, {},
                 i->shape());
  }
  if (init_is_identity) return arranged;
  HloInstruction* init_b = init;
  if (i->shape().rank() > 0) {
    AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, std::vector<int64_t>{});
    init_b = b.Add(HloOpcode::kBroadcast, {init}, std::move(attrs), i->shape());
  }
  return b.Add(*op, {arranged, init_b}, {}, i->shape());
}

}  // namespace

// A variadic reduce or reduce-window whose reducer folds each operand on
// its own (result k is one add, multiply, maximum, minimum, and or or of
// accumulator k and value k) is one per operand: the kernels and the
// runtime's window loops then run each like any single one.
HloInstruction* SplitComponentwiseReduce(HloInstruction* i, hlo::ComputationBuilder& b) {
  if ((i->opcode() != HloOpcode::kReduce && i->opcode() != HloOpcode::kReduceWindow) ||
      i->operand_count() < 4 || !i->shape().IsTuple()) {
    return nullptr;
  }
  const auto* reducer = i->attributes().Get<hlo::HloComputation*>(AttrKey::kToApply);
  const HloInstruction* root = reducer->root();
  const int64_t n = i->operand_count() / 2;
  if (root->opcode() != HloOpcode::kTuple || root->operand_count() != n ||
      reducer->instruction_count() != 3 * n + 1) {
    return nullptr;
  }
  std::vector<HloOpcode> ops;
  for (int64_t k = 0; k < n; ++k) {
    const HloInstruction* r = root->operand(k);
    const HloOpcode op = r->opcode();
    if (op != HloOpcode::kAdd && op != HloOpcode::kMultiply && op != HloOpcode::kMaximum &&
        op != HloOpcode::kMinimum && op != HloOpcode::kAnd && op != HloOpcode::kOr) {
      return nullptr;
    }
    const HloInstruction* acc = reducer->parameter(k);
    const HloInstruction* value = reducer->parameter(n + k);
    const bool pair = (r->operand(0) == acc && r->operand(1) == value) ||
                      (r->operand(0) == value && r->operand(1) == acc);
    if (!pair) return nullptr;
    ops.push_back(op);
  }
  hlo::HloModule* module = i->parent()->parent();
  if (module == nullptr) return nullptr;
  std::vector<HloInstruction*> parts;
  for (int64_t k = 0; k < n; ++k) {
    const hlo::Shape scalar(i->operand(n + k)->shape().element_type(), {});
    hlo::ComputationBuilder f(
        module->UniqueComputationName(reducer->name() + "." + std::to_string(k)));
    HloInstruction* x = f.Parameter(0, scalar, "x");
    HloInstruction* y = f.Parameter(1, scalar, "y");
    hlo::HloComputation* fold = module->AddComputation(f.Build(f.Binary(ops[k], x, y)));
    AttributeMap attrs = i->attributes();
    attrs.Set(AttrKey::kToApply, fold);
    parts.push_back(
        b.Add(i->opcode(), {i->operand(k), i->operand(n + k)}, attrs, i->shape().tuple_shapes(k)));
  }
  HloInstruction* tuple = b.Tuple(parts);
  tuple->mutable_shape() = i->shape();
  return tuple;
}

// A convolution whose operands hold another type than its float result
// (a pred or integer kernel, f16 input to an f32 result): the operands
// converted first, as the convolution converts them, so the library
// convolution sees one element type throughout.
HloInstruction* ConvolutionInResultType(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kConvolution || i->operand_count() != 2) return nullptr;
  const PrimitiveType t = i->shape().element_type();
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && !IsNarrowFloat(t)) {
    return nullptr;
  }
  std::vector<HloInstruction*> operands;
  bool converted = false;
  for (HloInstruction* o : i->operands()) {
    if (o->shape().element_type() == t || IsComplex(o->shape().element_type())) {
      operands.push_back(o);
      continue;
    }
    hlo::Shape wide = o->shape();
    wide.set_element_type(t);
    operands.push_back(b.Add(HloOpcode::kConvert, {o}, {}, wide));
    converted = true;
  }
  if (!converted) return nullptr;
  return b.Add(HloOpcode::kConvolution, operands, i->attributes(), i->shape());
}

const std::vector<Rule>& DotReduceRules() {
  static const std::vector<Rule> kRules = {
      DotWithoutContraction, DotOfTranspose,           ReduceNothing,
      ReduceOfBroadcast,     SplitComponentwiseReduce, ConvolutionInResultType};
  return kRules;
}

}  // namespace uir::passes::algsimp
