// batch-norm-inference, batch-norm-training and batch-norm-grad for the
// evaluator, in f64 and rounded once to the result type.
#include "eval/batch_norm.h"

#include <cmath>
#include <vector>

#include "eval/elementwise.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "support/error.h"

namespace uir::eval {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

// Batch norm over every dimension but `feature_index`, in f64.
Literal BatchNorm(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  const int64_t f = inst.attributes().Get<int64_t>(AttrKey::kFeatureIndex);
  const double eps = inst.attributes().Get<double>(AttrKey::kEpsilon);
  const PrimitiveType t = ops[0]->shape().element_type();
  std::vector<Literal> w;
  for (const Literal* o : ops) w.push_back(Convert(*o, PrimitiveType::kF64));
  const auto& dims = ops[0]->shape().dimensions();
  const int64_t features = dims[f];
  const int64_t stride = Strides(dims)[f];
  const int64_t total = ops[0]->element_count();
  const double count = features == 0 ? 0 : static_cast<double>(total / features);
  auto feature = [&](int64_t i) { return (i / stride) % features; };
  auto per_feature_mean = [&](auto value) {
    std::vector<double> m(static_cast<size_t>(features), 0.0);
    for (int64_t i = 0; i < total; ++i) m[feature(i)] += value(i);
    for (double& v : m) v /= count;
    return m;
  };
  const double* x = Data<double>(w[0]);
  auto vec = [](const Literal& l) {
    return std::vector<double>(Data<double>(l), Data<double>(l) + l.element_count());
  };
  auto out_of = [&](const std::vector<double>& v, const std::vector<int64_t>& d) {
    Literal l = MakeLiteral(PrimitiveType::kF64, d);
    std::copy(v.begin(), v.end(), MutableData<double>(l));
    return Convert(l, t);
  };
  const std::vector<double> scale = vec(w[1]);
  if (inst.opcode() == HloOpcode::kBatchNormInference ||
      inst.opcode() == HloOpcode::kBatchNormTraining) {
    std::vector<double> mean, var;
    if (inst.opcode() == HloOpcode::kBatchNormInference) {
      mean = vec(w[3]);
      var = vec(w[4]);
    } else {
      mean = per_feature_mean([&](int64_t i) { return x[i]; });
      var = per_feature_mean([&](int64_t i) {
        const double d = x[i] - mean[feature(i)];
        return d * d;
      });
    }
    const std::vector<double> offset = vec(w[2]);
    std::vector<double> y(static_cast<size_t>(total));
    for (int64_t i = 0; i < total; ++i) {
      const int64_t c = feature(i);
      y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
    }
    if (inst.opcode() == HloOpcode::kBatchNormInference) return out_of(y, dims);
    return TupleOf({out_of(y, dims), out_of(mean, {features}), out_of(var, {features})});
  }
  // batch-norm-grad(operand, scale, mean, variance, grad_output).
  const std::vector<double> mean = vec(w[2]), var = vec(w[3]);
  const double* dy = Data<double>(w[4]);
  const auto dy_mean = per_feature_mean([&](int64_t i) { return dy[i]; });
  const auto dy_xc_mean =
      per_feature_mean([&](int64_t i) { return dy[i] * (x[i] - mean[feature(i)]); });
  std::vector<double> dx(static_cast<size_t>(total)), dscale(static_cast<size_t>(features)),
      doffset(static_cast<size_t>(features));
  for (int64_t c = 0; c < features; ++c) {
    doffset[c] = dy_mean[c] * count;
    dscale[c] = dy_xc_mean[c] * count / std::sqrt(var[c] + eps);
  }
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = feature(i);
    const double inv = 1.0 / std::sqrt(var[c] + eps);
    dx[i] =
        scale[c] * inv * (dy[i] - dy_mean[c] - (x[i] - mean[c]) * dy_xc_mean[c] / (var[c] + eps));
  }
  return TupleOf({out_of(dx, dims), out_of(dscale, {features}), out_of(doffset, {features})});
}

}  // namespace uir::eval
