#include "passes/layout_normalization.h"

#include <algorithm>
#include <numeric>

#include "hlo/builder.h"
#include "passes/dce.h"
#include "passes/fusion/fusion_utils.h"

namespace uir::passes {

using hlo::AttributeMap;
using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

namespace {

using Dims = std::vector<int64_t>;

// Physical position -> logical dimension (major to minor).
Dims MajorToMinor(const Shape& s) {
  if (!s.has_layout() || s.layout().minor_to_major.empty()) {
    Dims p(static_cast<size_t>(s.rank()));
    std::iota(p.begin(), p.end(), 0);
    return p;
  }
  Dims p = s.layout().minor_to_major;
  std::reverse(p.begin(), p.end());
  return p;
}

Dims Inverse(const Dims& p) {
  Dims inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

bool IsIdentity(const Dims& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool IsDefault(const Shape& s) { return !s.IsArray() || IsIdentity(MajorToMinor(s)); }

Shape WithDefaultLayout(Shape s) {
  s.set_layout(Shape::DefaultLayout(s.rank()));
  return s;
}

// The default-layout array holding `s`'s elements in memory order.
Shape Physical(const Shape& s) {
  Dims dims;
  for (int64_t d : MajorToMinor(s)) dims.push_back(s.dimensions(d));
  return WithDefaultLayout(Shape(s.element_type(), dims));
}

bool CallsArrayComputations(HloOpcode op) {
  switch (op) {
    case HloOpcode::kWhile:
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
    case HloOpcode::kConditional:
    case HloOpcode::kCustomCall:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

class Normalizer {
 public:
  explicit Normalizer(HloComputation& c) : c_(c), b_(&c) {}

  bool Run() {
    bool changed = false;
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) {
      if (i->is_removed() || !Handles(*i)) continue;
      HloInstruction* result = Rewrite(i);
      if (result == nullptr) continue;
      c_.ReplaceInstruction(i, result);
      changed = true;
    }
    if (changed) RemoveDeadInstructions(c_);
    return changed;
  }

 private:
  static bool Handles(const HloInstruction& i) {
    const HloOpcode op = i.opcode();
    if (!i.shape().IsArray() || i.HasSideEffect() || CallsArrayComputations(op)) return false;
    switch (op) {
      case HloOpcode::kParameter:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kBitcast:
      case HloOpcode::kDot:
      case HloOpcode::kConvolution:
        return false;
      default:
        break;
    }
    // Tiled and other extended layouts are a backend's business.
    const auto plain = [](const Shape& s) {
      return s.IsArray() && (!s.has_layout() || s.layout().HasOnlyMinorToMajor());
    };
    if (!plain(i.shape())) return false;
    for (const HloInstruction* o : i.operands())
      if (!plain(o->shape())) return false;
    return true;
  }

  HloInstruction* Bitcast(HloInstruction* x, const Shape& shape) {
    if (x->shape() == shape) return x;
    if (x->opcode() == HloOpcode::kBitcast && x->operand(0)->shape() == shape) return x->operand(0);
    return b_.Add(HloOpcode::kBitcast, {x}, {}, shape);
  }
  HloInstruction* Phys(HloInstruction* x) { return Bitcast(x, Physical(x->shape())); }

  HloInstruction* TransposeTo(HloInstruction* x, const Dims& dims) {
    if (IsIdentity(dims)) return x;
    Dims out;
    for (int64_t d : dims) out.push_back(x->shape().dimensions(d));
    AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, dims);
    return b_.Add(HloOpcode::kTranspose, {x}, std::move(attrs),
                  WithDefaultLayout(Shape(x->shape().element_type(), out)));
  }

  // `x` as a default-layout array of its logical shape.
  HloInstruction* Logical(HloInstruction* x) {
    if (IsDefault(x->shape())) return x;
    return TransposeTo(Phys(x), Inverse(MajorToMinor(x->shape())));
  }

  HloInstruction* Clone(const HloInstruction& i, const Shape& shape,
                        const std::vector<HloInstruction*>& operands) {
    auto clone = i.CloneWithNewOperands(shape, operands);
    clone->set_name(c_.UniqueName(i.name()));
    return c_.AddInstruction(std::move(clone));
  }

  HloInstruction* Rewrite(HloInstruction* i) {
    bool all_default = IsDefault(i->shape());
    for (const HloInstruction* o : i->operands()) all_default &= IsDefault(o->shape());
    HloInstruction* x = i->operand_count() > 0 ? i->operand(0) : nullptr;
    if (all_default) {
      // A reshape between default layouts moves no data.
      return i->opcode() == HloOpcode::kReshape ? Bitcast(x, i->shape()) : nullptr;
    }
    const Dims out_order = MajorToMinor(i->shape());
    switch (i->opcode()) {
      case HloOpcode::kCopy: {
        const Dims in_inverse = Inverse(MajorToMinor(x->shape()));
        Dims q;
        for (int64_t d : out_order) q.push_back(in_inverse[d]);
        return Bitcast(TransposeTo(Phys(x), q), i->shape());
      }
      case HloOpcode::kTranspose: {
        const Dims in_inverse = Inverse(MajorToMinor(x->shape()));
        const Dims& t = i->attributes().Get<Dims>(AttrKey::kDimensions);
        Dims q;
        for (int64_t d : out_order) q.push_back(in_inverse[t[d]]);
        return Bitcast(TransposeTo(Phys(x), q), i->shape());
      }
      case HloOpcode::kBroadcast: {
        const Dims& bdims = i->attributes().Get<Dims>(AttrKey::kDimensions);
        const Dims out_inverse = Inverse(out_order);
        Dims target;  // per physical operand position, the physical output position
        for (int64_t d : MajorToMinor(x->shape())) target.push_back(out_inverse[bdims[d]]);
        Dims order(target.size());
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(),
                  [&](int64_t a, int64_t b) { return target[a] < target[b]; });
        HloInstruction* operand = TransposeTo(Phys(x), order);
        Dims sorted = target;
        std::sort(sorted.begin(), sorted.end());
        AttributeMap attrs;
        attrs.Set(AttrKey::kDimensions, sorted);
        return Bitcast(
            b_.Add(HloOpcode::kBroadcast, {operand}, std::move(attrs), Physical(i->shape())),
            i->shape());
      }
      case HloOpcode::kReduce:
        if (i->operand_count() == 2) return Reduce(i, out_order);
        break;
      case HloOpcode::kReshape: {
        // The reshape decomposer: to logical order, reinterpret, to the
        // result's memory order.
        HloInstruction* flat = Bitcast(Logical(x), WithDefaultLayout(i->shape()));
        return Bitcast(TransposeTo(flat, out_order), i->shape());
      }
      default:
        break;
    }
    if (hlo::IsElementwise(i->opcode())) {
      bool same = true;
      for (const HloInstruction* o : i->operands())
        same &= o->shape().rank() != i->shape().rank() || MajorToMinor(o->shape()) == out_order;
      if (same) {
        std::vector<HloInstruction*> operands;
        for (HloInstruction* o : i->operands())
          operands.push_back(o->shape().rank() == i->shape().rank() ? Phys(o) : o);
        return Bitcast(Clone(*i, Physical(i->shape()), operands), i->shape());
      }
    }
    // Any other op: computed in the default layout between transposes.
    std::vector<HloInstruction*> operands;
    for (HloInstruction* o : i->operands()) operands.push_back(Logical(o));
    HloInstruction* n = Clone(*i, WithDefaultLayout(i->shape()), operands);
    return Bitcast(TransposeTo(n, out_order), i->shape());
  }

  HloInstruction* Reduce(HloInstruction* i, const Dims& out_order) {
    HloInstruction* x = i->operand(0);
    const Dims in_order = MajorToMinor(x->shape());
    const Dims in_inverse = Inverse(in_order);
    const Dims& reduced = i->attributes().Get<Dims>(AttrKey::kDimensions);
    Dims physical_reduced;
    for (int64_t r : reduced) physical_reduced.push_back(in_inverse[r]);
    std::sort(physical_reduced.begin(), physical_reduced.end());
    Dims kept_physical, kept_dims;  // in memory order: logical operand dims, sizes
    for (int64_t k = 0; k < x->shape().rank(); ++k) {
      if (std::binary_search(physical_reduced.begin(), physical_reduced.end(), k)) continue;
      kept_physical.push_back(in_order[k]);
      kept_dims.push_back(x->shape().dimensions(in_order[k]));
    }
    AttributeMap attrs = i->attributes();
    attrs.Set(AttrKey::kDimensions, physical_reduced);
    HloInstruction* n = b_.Add(HloOpcode::kReduce, {Phys(x), i->operand(1)}, std::move(attrs),
                               WithDefaultLayout(Shape(i->shape().element_type(), kept_dims)));
    // Logical result dim j is the j-th kept operand dim in logical order.
    Dims kept_logical = kept_physical;
    std::sort(kept_logical.begin(), kept_logical.end());
    Dims t;
    for (int64_t d : out_order) {
      const int64_t operand_dim = kept_logical[d];
      t.push_back(std::find(kept_physical.begin(), kept_physical.end(), operand_dim) -
                  kept_physical.begin());
    }
    return Bitcast(TransposeTo(n, t), i->shape());
  }

  HloComputation& c_;
  hlo::ComputationBuilder b_;
};

}  // namespace

bool LayoutNormalization::Run(hlo::HloModule& module) {
  const auto fused = fusion::FusedComputations(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (fused.count(c)) continue;
    changed |= Normalizer(*c).Run();
  }
  return changed;
}

}  // namespace uir::passes
