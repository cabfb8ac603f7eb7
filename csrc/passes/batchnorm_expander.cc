#include "passes/batchnorm_expander.h"

#include <memory>
#include <string>
#include <vector>

#include "hlo/builder.h"
#include "support/float_format.h"

namespace uir::passes {

using hlo::AttributeMap;
using hlo::AttrKey;
using hlo::ComputationBuilder;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

namespace {

// The arithmetic of one batch-norm instruction, built beside it.
class Expansion {
 public:
  Expansion(HloInstruction* bn, HloComputation* adder) : bn_(bn), b_(bn->parent()), adder_(adder) {
    const Shape& x = bn->operand(0)->shape();
    type_ = x.element_type();
    work_ = IsNarrowFloat(type_) ? PrimitiveType::kF32 : type_;
    dims_ = x.dimensions();
    feature_ = bn->attributes().Get<int64_t>(AttrKey::kFeatureIndex);
    epsilon_ = bn->attributes().Get<double>(AttrKey::kEpsilon);
    const int64_t features = dims_[feature_];
    int64_t total = 1;
    for (int64_t d : dims_) total *= d;
    count_ = features == 0 ? 0.0 : static_cast<double>(total / features);
    for (int64_t k = 0; k < static_cast<int64_t>(dims_.size()); ++k) {
      if (k != feature_) reduced_.push_back(k);
    }
  }

  HloInstruction* Build() {
    switch (bn_->opcode()) {
      case HloOpcode::kBatchNormTraining:
        return Training();
      case HloOpcode::kBatchNormInference:
        return Inference();
      default:
        return Grad();
    }
  }

 private:
  HloInstruction* Operand(int64_t k) {
    HloInstruction* x = bn_->operand(k);
    return work_ == type_ ? x : b_.Convert(x, work_);
  }
  HloInstruction* Result(HloInstruction* x) { return work_ == type_ ? x : b_.Convert(x, type_); }
  HloInstruction* Scalar(double v) { return b_.Constant(hlo::ScalarLiteral(work_, v)); }
  // A per-feature vector [C] spread over the operand's shape.
  HloInstruction* Spread(HloInstruction* v) { return b_.Broadcast(v, dims_, {feature_}); }
  HloInstruction* Full(double v) { return b_.Broadcast(Scalar(v), dims_, {}); }
  HloInstruction* PerFeature(double v) { return b_.Broadcast(Scalar(v), {dims_[feature_]}, {}); }
  HloInstruction* Sum(HloInstruction* x) {
    AttributeMap attrs;
    attrs.Set(AttrKey::kDimensions, reduced_);
    attrs.Set(AttrKey::kToApply, adder_);
    return b_.Add(HloOpcode::kReduce, {x, Scalar(0.0)}, std::move(attrs),
                  Shape(work_, {dims_[feature_]}));
  }
  HloInstruction* Mul(HloInstruction* a, HloInstruction* b) {
    return b_.Binary(HloOpcode::kMultiply, a, b);
  }
  HloInstruction* Sub(HloInstruction* a, HloInstruction* b) {
    return b_.Binary(HloOpcode::kSubtract, a, b);
  }
  // 1 / sqrt(var + epsilon), per feature.
  HloInstruction* InverseDeviation(HloInstruction* var) {
    return b_.Unary(HloOpcode::kRsqrt, b_.Binary(HloOpcode::kAdd, var, PerFeature(epsilon_)));
  }
  HloInstruction* Normalize(HloInstruction* x, HloInstruction* mean, HloInstruction* var,
                            HloInstruction* scale, HloInstruction* offset) {
    HloInstruction* factor = Mul(InverseDeviation(var), scale);
    return b_.Binary(HloOpcode::kAdd, Mul(Sub(x, Spread(mean)), Spread(factor)), Spread(offset));
  }

  HloInstruction* Training() {
    HloInstruction* x = Operand(0);
    const double n = count_ == 0 ? 1.0 : count_;
    HloInstruction* mean = b_.Binary(HloOpcode::kDivide, Sum(x), PerFeature(n));
    HloInstruction* xc = Sub(x, Spread(mean));
    HloInstruction* var = b_.Binary(HloOpcode::kDivide, Sum(Mul(xc, xc)), PerFeature(n));
    HloInstruction* y = Normalize(x, mean, var, Operand(1), Operand(2));
    return b_.Tuple({Result(y), Result(mean), Result(var)});
  }

  HloInstruction* Inference() {
    return Result(Normalize(Operand(0), Operand(3), Operand(4), Operand(1), Operand(2)));
  }

  HloInstruction* Grad() {
    HloInstruction* x = Operand(0);
    HloInstruction* scale = Operand(1);
    HloInstruction* mean = Operand(2);
    HloInstruction* var = Operand(3);
    HloInstruction* dy = Operand(4);
    const double n = count_ == 0 ? 1.0 : count_;
    HloInstruction* xc = Sub(x, Spread(mean));
    HloInstruction* r = InverseDeviation(var);
    HloInstruction* sum_dy = Sum(dy);
    HloInstruction* sum_dy_xc = Sum(Mul(dy, xc));
    HloInstruction* grad_scale = Mul(sum_dy_xc, r);
    // dy - sum(dy) / N - xc * sum(dy xc) / N / (var + epsilon)
    HloInstruction* dy_mean = b_.Binary(HloOpcode::kDivide, sum_dy, PerFeature(n));
    HloInstruction* var_eps = b_.Binary(HloOpcode::kAdd, var, PerFeature(epsilon_));
    HloInstruction* k = b_.Binary(HloOpcode::kDivide,
                                  b_.Binary(HloOpcode::kDivide, sum_dy_xc, PerFeature(n)), var_eps);
    HloInstruction* inner = Sub(Sub(dy, Spread(dy_mean)), Mul(xc, Spread(k)));
    HloInstruction* grad_x = Mul(Spread(Mul(scale, r)), inner);
    return b_.Tuple({Result(grad_x), Result(grad_scale), Result(sum_dy)});
  }

  HloInstruction* bn_;
  ComputationBuilder b_;
  HloComputation* adder_;
  PrimitiveType type_ = PrimitiveType::kF32;
  PrimitiveType work_ = PrimitiveType::kF32;
  std::vector<int64_t> dims_;
  std::vector<int64_t> reduced_;
  int64_t feature_ = 0;
  double epsilon_ = 0;
  double count_ = 0;
};

bool IsBatchNorm(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kBatchNormTraining ||
         i.opcode() == HloOpcode::kBatchNormInference || i.opcode() == HloOpcode::kBatchNormGrad;
}

// The scalar add computation the sums reduce with, one per element type.
HloComputation* Adder(hlo::HloModule& module, PrimitiveType type) {
  ComputationBuilder b(module.UniqueComputationName("batchnorm_add"));
  const Shape scalar(type, {});
  HloInstruction* x = b.Parameter(0, scalar, "x");
  HloInstruction* y = b.Parameter(1, scalar, "y");
  return module.AddComputation(b.Build(b.Binary(HloOpcode::kAdd, x, y)));
}

}  // namespace

bool BatchNormExpander::Run(hlo::HloModule& module) {
  std::vector<HloInstruction*> found;
  for (const auto& c : module.computations()) {
    for (HloInstruction* i : c->instructions()) {
      if (IsBatchNorm(*i) && i->operand(0)->shape().IsArray() &&
          IsFloat(i->operand(0)->shape().element_type()))
        found.push_back(i);
    }
  }
  std::vector<std::pair<PrimitiveType, HloComputation*>> adders;
  for (HloInstruction* bn : found) {
    const PrimitiveType t = bn->operand(0)->shape().element_type();
    const PrimitiveType work = IsNarrowFloat(t) ? PrimitiveType::kF32 : t;
    HloComputation* adder = nullptr;
    for (const auto& [type, c] : adders) {
      if (type == work) adder = c;
    }
    if (adder == nullptr) adders.emplace_back(work, adder = Adder(module, work));
    HloInstruction* replacement = Expansion(bn, adder).Build();
    HloComputation* parent = bn->parent();
    if (bn == parent->root()) parent->set_root(replacement);
    bn->ReplaceAllUsesWith(replacement);
    parent->RemoveInstruction(bn);
  }
  return !found.empty();
}

}  // namespace uir::passes
