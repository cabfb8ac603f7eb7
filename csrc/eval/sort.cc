// sort: every operand is permuted along the sort dimension by the order the
// comparator defines on the operands' elements. The evaluator always sorts
// stably (an unstable sort may return any order of equal elements, so the
// stable one is a correct answer for both).
//
// Comparators that compare one transformed key, `compare(g(p[2k]),
// g(p[2k+1]))` with LT or GT (what JAX emits for sort and argsort, with its
// NaN and -0.0 canonicalization as g), sort on keys computed once for all
// elements. Any other comparator is called per comparison.
#include "eval/sort.h"

#include <algorithm>
#include <numeric>

#include "eval/context.h"
#include "eval/elementwise.h"
#include "eval/kernels.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/float_format.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::PrimitiveType;

bool DependsOnParameters(const HloInstruction* i) {
  if (i->opcode() == HloOpcode::kParameter) return true;
  for (const HloInstruction* o : i->operands()) {
    if (DependsOnParameters(o)) return true;
  }
  return false;
}

// True when `a` computes from parameter `pa` exactly what `b` computes from
// parameter `pb`, reading no other parameter.
bool Mirrors(const HloInstruction* a, const HloInstruction* b, int64_t pa, int64_t pb) {
  if (a->opcode() == HloOpcode::kParameter || b->opcode() == HloOpcode::kParameter) {
    return a->opcode() == b->opcode() && a->parameter_number() == pa && b->parameter_number() == pb;
  }
  if (a == b) return !DependsOnParameters(a);
  if (a->opcode() != b->opcode() || !(a->shape() == b->shape()) ||
      a->operand_count() != b->operand_count())
    return false;
  if (a->opcode() == HloOpcode::kConstant) return a->literal() == b->literal();
  for (const auto& [key, value] : a->attributes().entries()) {
    if (key == AttrKey::kMetadata) continue;
    const hlo::AttrValue* other = b->attributes().Find(key);
    if (other == nullptr || !(*other == value)) return false;
  }
  for (int64_t i = 0; i < a->operand_count(); ++i) {
    if (!Mirrors(a->operand(i), b->operand(i), pa, pb)) return false;
  }
  return true;
}

// The key form of a comparator, when it has one.
struct KeyForm {
  const HloInstruction* key;  // g(p[2k]) inside the comparator
  int64_t operand;            // k
  Direction direction;
  bool total_order;
};

std::optional<KeyForm> FindKeyForm(const HloComputation& c) {
  const HloInstruction* root = c.root();
  if (root->opcode() != HloOpcode::kCompare) return std::nullopt;
  const Direction d = DirectionOf(*root);
  if (d != Direction::kLt && d != Direction::kGt) return std::nullopt;
  const auto type = root->attributes().GetEnumOr<hlo::ComparisonType>(AttrKey::kCompareType);
  if (hlo::IsComplex(root->operand(0)->shape().element_type())) return std::nullopt;
  for (int64_t k = 0; 2 * k + 1 < c.num_parameters(); ++k) {
    if (Mirrors(root->operand(0), root->operand(1), 2 * k, 2 * k + 1)) {
      return KeyForm{root->operand(0), k, d, type == hlo::ComparisonType::kTotalOrder};
    }
  }
  return std::nullopt;
}

}  // namespace

Literal EvalSort(const HloInstruction& inst, const std::vector<const Literal*>& ops, Context& ctx) {
  const HloComputation& cmp = *inst.attributes().Get<HloComputation*>(AttrKey::kToApply);
  const int64_t dim = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions).at(0);
  const std::vector<int64_t>& dims = ops[0]->shape().dimensions();
  const int64_t total = ops[0]->element_count();
  const int64_t n = dims[dim];
  const int64_t stride = Strides(dims)[dim];

  // Keys for the key form, widened so they compare in a native type.
  std::optional<KeyForm> form = ctx.Liftable(cmp) ? FindKeyForm(cmp) : std::nullopt;
  Literal keys;
  if (form && total > 0) {
    std::vector<Literal> flat;
    for (const Literal* o : ops) flat.push_back(Reshaped(*o, {o->element_count()}));
    std::vector<const Literal*> args;
    for (int64_t p = 0; p < cmp.num_parameters(); ++p) args.push_back(&flat[p / 2]);
    keys = ctx.CallLifted(cmp, args, form->key);
    if (hlo::IsNarrowFloat(keys.shape().element_type())) keys = WidenToF32(keys);
  }

  std::vector<Literal> outs;
  for (const Literal* o : ops) outs.push_back(*o);
  std::vector<int64_t> perm(static_cast<size_t>(n));
  std::vector<int64_t> outer_dims = dims;
  outer_dims[dim] = 1;
  ForEachIndex(outer_dims, [&](const std::vector<int64_t>& idx, int64_t) {
    int64_t base = 0;
    const auto strides = Strides(dims);
    for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * strides[d];
    auto at = [&](int64_t k) { return base + k * stride; };
    std::iota(perm.begin(), perm.end(), 0);
    if (form) {
      DispatchNative(keys.shape().element_type(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* key = Data<T>(keys);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
          bool less = false;
          CompareKernel<T>(form->direction, form->total_order, key + at(a), key + at(b), &less, 1);
          return less;
        });
      });
    } else {
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
        std::vector<Literal> scalars;
        for (const Literal* o : ops) {
          scalars.push_back(ElementAt(*o, at(a)));
          scalars.push_back(ElementAt(*o, at(b)));
        }
        std::vector<const Literal*> args;
        for (const Literal& s : scalars) args.push_back(&s);
        return ctx.Call(cmp, args).GetBits(0) != 0;
      });
    }
    for (size_t j = 0; j < ops.size(); ++j) {
      for (int64_t k = 0; k < n; ++k) CopyElement(*ops[j], at(perm[k]), outs[j], at(k));
    }
  });
  if (outs.size() == 1) return std::move(outs[0]);
  return TupleOf(std::move(outs));
}

}  // namespace uir::eval
