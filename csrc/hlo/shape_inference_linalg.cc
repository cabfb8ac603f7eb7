// Shape inference for dot, convolution, fft, cholesky, triangular-solve,
// batch norm and the rng family, with XLA's operand and attribute rules.
#include <algorithm>

#include "hlo/shape_inference_internal.h"

namespace uir::hlo::infer {
namespace {

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }

// Batch dims of a rank >= 2 matrix operand must agree, and the last two are the matrix.
void CheckMatrix(HloOpcode op, const Shapes& s, size_t i, const char* what) {
  RequireArray(op, s, i);
  if (s[i]->rank() < 2) Fail(op, s, std::string(what) + " must have rank 2 or more");
  if (!IsFloatOrComplex(s[i]->element_type()))
    Fail(op, s, std::string(what) + " must be floating-point or complex");
}

}  // namespace

std::optional<Shape> InferConvolution(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArray(op, s, 0);
  RequireArray(op, s, 1);
  const auto* dn = a.Find(AttrKey::kDimLabels);
  if (!dn) Fail(op, s, "needs dim_labels=");
  const auto& d = AttrAs<ConvolutionDimensionNumbers>(*dn);
  const Shape& lhs = *s[0];
  const Shape& rhs = *s[1];
  if (d.input_rank != lhs.rank() || d.kernel_rank != rhs.rank()) {
    Fail(op, s, "dim_labels " + DimLabelsToString(d) + " do not match the operand ranks");
  }
  Window window;
  if (const auto* w = a.Find(AttrKey::kWindow)) window = std::get<Window>(*w);
  const size_t spatial = d.input_spatial_dimensions.size();
  if (window.dimensions.empty()) window.dimensions.resize(spatial);
  if (window.dimensions.size() != spatial)
    Fail(op, s, "window rank differs from the number of spatial dimensions");
  const int64_t fgc = a.GetOr<int64_t>(AttrKey::kFeatureGroupCount).value_or(1);
  const int64_t bgc = a.GetOr<int64_t>(AttrKey::kBatchGroupCount).value_or(1);
  const int64_t in_features = lhs.dimensions(d.input_feature_dimension);
  if (fgc <= 0 || in_features % fgc != 0 ||
      rhs.dimensions(d.kernel_input_feature_dimension) * fgc != in_features) {
    Fail(op, s,
         "input features " + std::to_string(in_features) +
             " do not match kernel input features times feature_group_count");
  }
  if (bgc <= 0 || lhs.dimensions(d.input_batch_dimension) % bgc != 0) {
    Fail(op, s, "batch_group_count must divide the batch size");
  }
  const int64_t out_features = rhs.dimensions(d.kernel_output_feature_dimension);
  if (fgc > 1 && bgc > 1)
    Fail(op, s, "feature_group_count and batch_group_count cannot both exceed 1");
  if (out_features % fgc != 0 || out_features % bgc != 0)
    Fail(op, s,
         "output features " + std::to_string(out_features) +
             " must divide by feature_group_count and batch_group_count");
  if (d.output_rank != lhs.rank()) Fail(op, s, "the output rank must equal the input rank");
  std::vector<int64_t> out(static_cast<size_t>(d.output_rank), 0);
  out[d.output_batch_dimension] = lhs.dimensions(d.input_batch_dimension) / bgc;
  out[d.output_feature_dimension] = rhs.dimensions(d.kernel_output_feature_dimension);
  for (size_t i = 0; i < spatial; ++i) {
    WindowDim w = window.dimensions[i];
    if (w.size != rhs.dimensions(d.kernel_spatial_dimensions[i])) {
      Fail(op, s,
           "window size " + std::to_string(w.size) + " differs from kernel spatial size " +
               std::to_string(rhs.dimensions(d.kernel_spatial_dimensions[i])));
    }
    out[d.output_spatial_dimensions[i]] =
        WindowedSize(op, s, lhs.dimensions(d.input_spatial_dimensions[i]), w);
  }
  return Shape(lhs.element_type(), out);
}

std::optional<Shape> InferDot(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArray(op, s, 0);
  RequireArray(op, s, 1);
  const Shape& lhs = *s[0];
  const Shape& rhs = *s[1];
  auto lb = Ints(a, AttrKey::kLhsBatchDims), rb = Ints(a, AttrKey::kRhsBatchDims);
  auto lc = Ints(a, AttrKey::kLhsContractingDims), rc = Ints(a, AttrKey::kRhsContractingDims);
  std::vector<int64_t> none;
  const auto& lbv = lb ? *lb : none;
  const auto& rbv = rb ? *rb : none;
  const auto& lcv = lc ? *lc : none;
  const auto& rcv = rc ? *rc : none;
  if (lbv.size() != rbv.size() || lcv.size() != rcv.size())
    Fail(op, s, "lhs and rhs need as many batch and contracting dims");
  {
    std::vector<int64_t> l = lbv, r = rbv;
    l.insert(l.end(), lcv.begin(), lcv.end());
    r.insert(r.end(), rcv.begin(), rcv.end());
    CheckDimList(op, s, l, lhs.rank(), "lhs batch or contracting dim");
    CheckDimList(op, s, r, rhs.rank(), "rhs batch or contracting dim");
  }
  if (const auto* p = a.Find(AttrKey::kOperandPrecision)) {
    if (const auto* list = std::get_if<std::vector<std::string>>(p); list && list->size() != 2)
      Fail(op, s, "operand_precision needs two entries");
  }
  for (size_t i = 0; i < lbv.size(); ++i) {
    CheckDim(op, s, lbv[i], lhs.rank(), "lhs batch dim");
    CheckDim(op, s, rbv[i], rhs.rank(), "rhs batch dim");
    if (lhs.dimensions(lbv[i]) != rhs.dimensions(rbv[i]))
      Fail(op, s, "batch dimension sizes differ");
  }
  for (size_t i = 0; i < lcv.size(); ++i) {
    CheckDim(op, s, lcv[i], lhs.rank(), "lhs contracting dim");
    CheckDim(op, s, rcv[i], rhs.rank(), "rhs contracting dim");
    if (lhs.dimensions(lcv[i]) != rhs.dimensions(rcv[i])) {
      Fail(op, s,
           "contracting dimension sizes differ: " + std::to_string(lhs.dimensions(lcv[i])) +
               " vs " + std::to_string(rhs.dimensions(rcv[i])));
    }
  }
  // A result dimension is dynamic where the operand dimension it comes from
  // is (a batch dimension where either side's is).
  std::vector<int64_t> out;
  std::vector<bool> dynamic;
  for (size_t i = 0; i < lbv.size(); ++i) {
    out.push_back(lhs.dimensions(lbv[i]));
    dynamic.push_back(lhs.is_dynamic_dimension(lbv[i]) || rhs.is_dynamic_dimension(rbv[i]));
  }
  auto free = [&](const Shape& x, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (std::find(b.begin(), b.end(), i) == b.end() &&
          std::find(c.begin(), c.end(), i) == c.end()) {
        out.push_back(x.dimensions(i));
        dynamic.push_back(x.is_dynamic_dimension(i));
      }
    }
  };
  free(lhs, lbv, lcv);
  free(rhs, rbv, rcv);
  Shape result(lhs.element_type(), out);
  for (size_t i = 0; i < dynamic.size(); ++i)
    result.set_dynamic_dimension(static_cast<int64_t>(i), dynamic[i]);
  return result;
}

std::optional<Shape> InferFft(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArray(op, s, 0);
  const Shape& x = *s[0];
  auto type = a.GetEnumOr<FftType>(AttrKey::kFftType);
  if (!type) Fail(op, s, "needs fft_type=");
  const auto length = RequireInts(op, s, a, AttrKey::kFftLength);
  if (length.empty() || length.size() > 3) Fail(op, s, "fft_length needs 1 to 3 entries");
  const int64_t n = static_cast<int64_t>(length.size());
  if (x.rank() < n) Fail(op, s, "the operand's rank is below the number of fft_length entries");
  for (int64_t l : length) {
    if (l < 0) Fail(op, s, "fft_length entries must be non-negative");
  }
  const PrimitiveType t = x.element_type();
  const int64_t first = x.rank() - n;
  auto trailing_match = [&](int64_t upto) {
    for (int64_t i = 0; i < upto; ++i) {
      if (x.dimensions(first + i) != length[i])
        Fail(op, s, "the trailing dimensions must equal fft_length");
    }
  };
  if (*type == FftType::kFft || *type == FftType::kIfft) {
    if (!IsComplex(t))
      Fail(op, s,
           std::string(EnumName(AttrKey::kFftType, EnumValue{static_cast<uint8_t>(*type)})) +
               " needs a complex operand");
    trailing_match(n);
    return x;
  }
  std::vector<int64_t> dims = x.dimensions();
  if (*type == FftType::kRfft) {
    if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64)
      Fail(op, s, "RFFT needs an f32 or f64 operand");
    trailing_match(n);
    dims.back() = length.back() == 0 ? 0 : length.back() / 2 + 1;
    return Shape(t == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64, dims);
  }
  if (!IsComplex(t)) Fail(op, s, "IRFFT needs a complex operand");
  trailing_match(n - 1);
  if (x.dimensions().back() != (length.back() == 0 ? 0 : length.back() / 2 + 1))
    Fail(op, s, "IRFFT's last dimension must be fft_length/2+1");
  dims.back() = length.back();
  return Shape(t == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32, dims);
}

std::optional<Shape> InferCholesky(HloOpcode op, const Shapes& s) {
  CheckMatrix(op, s, 0, "the operand");
  const Shape& x = *s[0];
  if (x.dimensions(x.rank() - 1) != x.dimensions(x.rank() - 2))
    Fail(op, s, "the operand must be square in its last two dimensions");
  return x;
}

std::optional<Shape> InferTriangularSolve(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  CheckMatrix(op, s, 0, "a");
  CheckMatrix(op, s, 1, "b");
  const Shape& m = *s[0];
  const Shape& b = *s[1];
  if (m.element_type() != b.element_type()) Fail(op, s, "a and b must have the same element type");
  if (m.rank() != b.rank()) Fail(op, s, "a and b must have the same rank");
  const int64_t r = m.rank();
  if (m.dimensions(r - 1) != m.dimensions(r - 2))
    Fail(op, s, "a must be square in its last two dimensions");
  for (int64_t i = 0; i < r - 2; ++i) {
    if (m.dimensions(i) != b.dimensions(i)) Fail(op, s, "a and b differ in a batch dimension");
  }
  const bool left = a.GetOr<bool>(AttrKey::kLeftSide).value_or(false);
  if (b.dimensions(left ? r - 2 : r - 1) != m.dimensions(r - 1))
    Fail(op, s,
         std::string("a's size must equal b's ") + (left ? "rows" : "columns") +
             (left ? " (left_side=true)" : " (left_side=false)"));
  return b;
}

std::optional<Shape> InferBatchNorm(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArrays(op, s);
  const Shape& x = *s[0];
  if (!IsFloat(x.element_type())) Fail(op, s, "the operand must be floating-point");
  if (x.rank() < 1) Fail(op, s, "the operand must have rank 1 or more");
  const int64_t fi = RequireInt(op, s, a, AttrKey::kFeatureIndex);
  CheckDim(op, s, fi, x.rank(), "feature_index");
  if (!a.Has(AttrKey::kEpsilon)) Fail(op, s, "needs epsilon=");
  const int64_t features = x.dimensions(fi);
  // batch-norm-grad's operand 4 is grad_output, operand-shaped; every other
  // operand after the first is a per-feature vector.
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i]->element_type() != x.element_type())
      Fail(op, s, "every operand must have the operand's element type");
    if (op == HloOpcode::kBatchNormGrad && i == 4) {
      if (s[i]->dimensions() != x.dimensions())
        Fail(op, s, "grad_output must have the operand's shape");
      continue;
    }
    if (s[i]->rank() != 1 || s[i]->dimensions(0) != features)
      Fail(op, s,
           "operand " + std::to_string(i) + " must be a vector of the " + std::to_string(features) +
               " features");
  }
  if (op == HloOpcode::kBatchNormInference) return x;
  Shape feature(x.element_type(), {features});
  return Shape::Tuple({x, feature, feature});
}

std::optional<Shape> InferRng(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  switch (op) {
    case HloOpcode::kRng: {
      RequireScalar(op, s, 0, "a");
      RequireScalar(op, s, 1, "b");
      if (s[0]->element_type() != s[1]->element_type())
        Fail(op, s, "a and b must have the same element type");
      auto dist = a.GetEnumOr<RandomDistribution>(AttrKey::kDistribution);
      if (!dist) Fail(op, s, "needs distribution=");
      if (*dist == RandomDistribution::kNormal && !IsFloat(s[0]->element_type()))
        Fail(op, s, "rng_normal needs floating-point parameters");
      return std::nullopt;  // the dimensions are the instruction's own
    }
    case HloOpcode::kRngBitGenerator:
      RequireArray(op, s, 0);
      if (s[0]->rank() != 1 || BitWidth(s[0]->element_type()) != 64 || s[0]->dimensions(0) < 2)
        Fail(op, s, "the state must be a u64 or s64 vector of 2 or more elements");
      return std::nullopt;  // (state, bits): the bits' shape is the instruction's own
    case HloOpcode::kRngGetAndUpdateState:
      if (!a.Has(AttrKey::kDelta)) Fail(op, s, "needs delta=");
      return Shape(PrimitiveType::kU64, {2});
    case HloOpcode::kStochasticConvert: {
      RequireArrays(op, s);
      if (!IsFloat(s[0]->element_type())) Fail(op, s, "the operand must be floating-point");
      if (!IsUnsigned(s[1]->element_type()) ||
          BitWidth(s[1]->element_type()) != BitWidth(s[0]->element_type()))
        Fail(op, s, "the random bits must be unsigned integers of the operand's width");
      RequireSameDims(op, s, 0, 1);
      return std::nullopt;  // the result type is the instruction's own
    }
    default:
      break;
  }
  Fail(op, s, "not an rng op");
}

}  // namespace uir::hlo::infer
