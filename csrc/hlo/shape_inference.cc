// Shape inference by opcode family. Every rule checks what it relies on and
// throws ShapeError naming the opcode and the operand shapes.
#include "hlo/shape_inference.h"

#include <algorithm>
#include <sstream>

#include "hlo/computation.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

using Shapes = std::vector<const Shape*>;

std::string Describe(HloOpcode op, const Shapes& s) {
  std::ostringstream os;
  os << OpcodeName(op) << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i]->Describe();
  os << ")";
  return os.str();
}

[[noreturn]] void Fail(HloOpcode op, const Shapes& s, const std::string& why) {
  throw ShapeError(Describe(op, s) + ": " + why);
}

void RequireArray(HloOpcode op, const Shapes& s, size_t i) {
  if (!s[i]->IsArray()) Fail(op, s, "operand " + std::to_string(i) + " must be an array");
}

void RequireSameDims(HloOpcode op, const Shapes& s, size_t a, size_t b) {
  if (s[a]->dimensions() != s[b]->dimensions()) {
    Fail(op, s,
         "operands " + std::to_string(a) + " and " + std::to_string(b) +
             " must have the same dimensions");
  }
}

Shape WithType(const Shape& like, PrimitiveType type) {
  Shape out(type, like.dimensions());
  for (int64_t i = 0; i < like.rank(); ++i)
    out.set_dynamic_dimension(i, like.is_dynamic_dimension(i));
  return out;
}

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }

const std::vector<int64_t>* Ints(const AttributeMap& a, AttrKey k) {
  const AttrValue* v = a.Find(k);
  return v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
}

std::vector<int64_t> RequireInts(HloOpcode op, const Shapes& s, const AttributeMap& a, AttrKey k) {
  const auto* v = Ints(a, k);
  if (!v) Fail(op, s, "needs " + std::string(AttrName(k)) + "={...}");
  return *v;
}

HloComputation* Computation(const AttributeMap& a, AttrKey k) {
  auto c = a.GetOr<HloComputation*>(k);
  return c ? *c : nullptr;
}

void CheckDim(HloOpcode op, const Shapes& s, int64_t d, int64_t rank, const char* what) {
  if (d < 0 || d >= rank) {
    Fail(op, s,
         std::string(what) + " " + std::to_string(d) + " is out of range for rank " +
             std::to_string(rank));
  }
}

// Output size of one windowed dimension (reduce-window, convolution).
int64_t WindowedSize(int64_t n, const WindowDim& w) {
  int64_t dilated_base = n == 0 ? 0 : (n - 1) * w.base_dilation + 1;
  int64_t padded = dilated_base + w.padding_low + w.padding_high;
  int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
  if (padded < dilated_window || w.stride <= 0) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

std::optional<Shape> InferUnary(HloOpcode op, const Shapes& s) {
  RequireArray(op, s, 0);
  const Shape& x = *s[0];
  const PrimitiveType t = x.element_type();
  switch (op) {
    case HloOpcode::kConvert:
    case HloOpcode::kReducePrecision:
      return op == HloOpcode::kConvert ? std::nullopt : std::optional<Shape>(x);
    case HloOpcode::kIsFinite:
      if (!IsFloat(t)) Fail(op, s, "needs a floating-point operand");
      return WithType(x, PrimitiveType::kPred);
    case HloOpcode::kAbs:
      if (IsComplex(t)) return WithType(x, ComplexComponentType(t));
      if (KindOf(t) == TypeKind::kPred || IsUnsigned(t))
        Fail(op, s, "needs a signed or floating-point operand");
      return x;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      if (IsComplex(t)) return WithType(x, ComplexComponentType(t));
      if (!IsFloat(t)) Fail(op, s, "needs a floating-point or complex operand");
      return x;
    case HloOpcode::kNot:
      if (!IsInteger(t) && t != PrimitiveType::kPred)
        Fail(op, s, "needs a pred or integer operand");
      return x;
    case HloOpcode::kClz:
    case HloOpcode::kPopulationCount:
      if (!IsInteger(t)) Fail(op, s, "needs an integer operand");
      return x;
    case HloOpcode::kNegate:
    case HloOpcode::kSign:
      if (t == PrimitiveType::kPred) Fail(op, s, "does not apply to pred");
      return x;
    default:
      if (!IsFloatOrComplex(t)) Fail(op, s, "needs a floating-point or complex operand");
      return x;
  }
}

std::optional<Shape> InferBinary(HloOpcode op, const Shapes& s, const AttributeMap& attrs) {
  RequireArray(op, s, 0);
  RequireArray(op, s, 1);
  RequireSameDims(op, s, 0, 1);
  const PrimitiveType t = s[0]->element_type();
  if (t != s[1]->element_type()) Fail(op, s, "operands must have the same element type");
  switch (op) {
    case HloOpcode::kCompare:
      if (!attrs.Has(AttrKey::kDirection)) Fail(op, s, "needs direction=");
      return WithType(*s[0], PrimitiveType::kPred);
    case HloOpcode::kComplex:
      if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64)
        Fail(op, s, "needs f32 or f64 operands");
      return WithType(*s[0], t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      if (!IsInteger(t) && t != PrimitiveType::kPred) Fail(op, s, "needs pred or integer operands");
      return *s[0];
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kMulhi:
      if (!IsInteger(t)) Fail(op, s, "needs integer operands");
      return *s[0];
    case HloOpcode::kAtan2:
      if (!IsFloatOrComplex(t)) Fail(op, s, "needs floating-point operands");
      return *s[0];
    default:
      return *s[0];
  }
}

std::optional<Shape> InferTernary(HloOpcode op, const Shapes& s) {
  for (size_t i = 0; i < 3; ++i) RequireArray(op, s, i);
  if (op == HloOpcode::kSelect) {
    if (s[0]->element_type() != PrimitiveType::kPred) Fail(op, s, "the predicate must be pred");
    if (s[1]->element_type() != s[2]->element_type())
      Fail(op, s, "on_true and on_false must have the same type");
    RequireSameDims(op, s, 1, 2);
    if (s[0]->rank() != 0) RequireSameDims(op, s, 0, 1);
    return *s[1];
  }
  // clamp(min, operand, max): min and max are scalars or operand-shaped.
  for (size_t i : {0u, 2u}) {
    if (s[i]->element_type() != s[1]->element_type())
      Fail(op, s, "operands must have the same element type");
    if (s[i]->rank() != 0) RequireSameDims(op, s, i, 1);
  }
  return *s[1];
}

Shape ReduceShape(const Shape& input, const std::vector<int64_t>& dims, PrimitiveType type) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < input.rank(); ++i) {
    if (std::find(dims.begin(), dims.end(), i) == dims.end()) out.push_back(input.dimensions(i));
  }
  return Shape(type, out);
}

std::optional<Shape> InferConvolution(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  RequireArray(op, s, 0);
  RequireArray(op, s, 1);
  const auto* dn = a.Find(AttrKey::kDimLabels);
  if (!dn) Fail(op, s, "needs dim_labels=");
  const auto& d = std::get<ConvolutionDimensionNumbers>(*dn);
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
        WindowedSize(lhs.dimensions(d.input_spatial_dimensions[i]), w);
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
  std::vector<int64_t> out;
  for (int64_t d : lbv) out.push_back(lhs.dimensions(d));
  auto free = [&](const Shape& x, const std::vector<int64_t>& b, const std::vector<int64_t>& c) {
    for (int64_t i = 0; i < x.rank(); ++i) {
      if (std::find(b.begin(), b.end(), i) == b.end() &&
          std::find(c.begin(), c.end(), i) == c.end()) {
        out.push_back(x.dimensions(i));
      }
    }
  };
  free(lhs, lbv, lcv);
  free(rhs, rbv, rcv);
  return Shape(lhs.element_type(), out);
}

std::optional<Shape> InferGather(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  const Shape& operand = *s[0];
  const Shape& indices = *s[1];
  auto offset_dims = RequireInts(op, s, a, AttrKey::kOffsetDims);
  auto collapsed = RequireInts(op, s, a, AttrKey::kCollapsedSliceDims);
  auto slice_sizes = RequireInts(op, s, a, AttrKey::kSliceSizes);
  std::vector<int64_t> operand_batching;
  if (auto v = Ints(a, AttrKey::kOperandBatchingDims)) operand_batching = *v;
  auto ivd = a.GetOr<int64_t>(AttrKey::kIndexVectorDim);
  if (!ivd) Fail(op, s, "needs index_vector_dim=");
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank())
    Fail(op, s, "slice_sizes must have one entry per operand dimension");
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < indices.rank(); ++i) {
    if (i != *ivd) batch.push_back(indices.dimensions(i));
  }
  std::vector<int64_t> offsets;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    bool dropped =
        std::find(collapsed.begin(), collapsed.end(), i) != collapsed.end() ||
        std::find(operand_batching.begin(), operand_batching.end(), i) != operand_batching.end();
    if (!dropped) offsets.push_back(slice_sizes[i]);
  }
  if (offsets.size() != offset_dims.size())
    Fail(op, s, "offset_dims does not match the uncollapsed slice dimensions");
  const int64_t rank = static_cast<int64_t>(batch.size() + offsets.size());
  std::vector<int64_t> out(static_cast<size_t>(rank));
  size_t bi = 0, oi = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(offset_dims.begin(), offset_dims.end(), i) != offset_dims.end()) {
      out[i] = offsets[oi++];
    } else {
      if (bi >= batch.size()) Fail(op, s, "offset_dims are inconsistent with the output rank");
      out[i] = batch[bi++];
    }
  }
  return Shape(operand.element_type(), out);
}

std::optional<Shape> InferFft(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  const Shape& x = *s[0];
  auto type = a.GetOr<std::string>(AttrKey::kFftType);
  auto length = RequireInts(op, s, a, AttrKey::kFftLength);
  if (!type) Fail(op, s, "needs fft_type=");
  if (*type == "FFT" || *type == "IFFT") return x;
  std::vector<int64_t> dims = x.dimensions();
  if (dims.empty() || length.empty()) Fail(op, s, "needs a non-scalar operand and fft_length");
  if (*type == "RFFT") {
    dims.back() = length.back() / 2 + 1;
    return Shape(
        x.element_type() == PrimitiveType::kF64 ? PrimitiveType::kC128 : PrimitiveType::kC64, dims);
  }
  dims.back() = length.back();
  return Shape(x.element_type() == PrimitiveType::kC128 ? PrimitiveType::kF64 : PrimitiveType::kF32,
               dims);
}

}  // namespace

std::optional<Shape> InferShape(HloOpcode op, const Shapes& s, const AttributeMap& a) {
  const int arity = OpcodeArity(op);
  if (arity != kVariadic && static_cast<int>(s.size()) != arity) {
    Fail(op, s, "takes " + std::to_string(arity) + " operand(s), got " + std::to_string(s.size()));
  }
  switch (OpcodeCategoryOf(op)) {
    case OpcodeCategory::kUnary:
      return InferUnary(op, s);
    case OpcodeCategory::kBinary:
      return InferBinary(op, s, a);
    case OpcodeCategory::kTernary:
      return InferTernary(op, s);
    default:
      break;
  }
  switch (op) {
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kDomain:
      return *s[0];
    case HloOpcode::kAddDependency:
      return *s[0];
    case HloOpcode::kAfterAll:
      return Shape::Token();
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      return Shape(PrimitiveType::kU32, {});
    case HloOpcode::kGetDimensionSize:
      return Shape(PrimitiveType::kS32, {});
    case HloOpcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* x : s) elements.push_back(*x);
      return Shape::Tuple(std::move(elements));
    }
    case HloOpcode::kGetTupleElement: {
      auto index = a.GetOr<int64_t>(AttrKey::kIndex);
      if (!index) Fail(op, s, "needs index=");
      if (!s[0]->IsTuple()) Fail(op, s, "needs a tuple operand");
      if (*index < 0 || *index >= s[0]->tuple_shapes_size())
        Fail(op, s, "index " + std::to_string(*index) + " is out of range");
      return s[0]->tuple_shapes(*index);
    }
    case HloOpcode::kTranspose: {
      auto perm = RequireInts(op, s, a, AttrKey::kDimensions);
      if (static_cast<int64_t>(perm.size()) != s[0]->rank())
        Fail(op, s, "dimensions must be a permutation of the operand's");
      std::vector<int64_t> dims;
      std::vector<bool> seen(perm.size(), false);
      for (int64_t p : perm) {
        CheckDim(op, s, p, s[0]->rank(), "dimension");
        if (seen[p]) Fail(op, s, "dimensions must be a permutation");
        seen[p] = true;
        dims.push_back(s[0]->dimensions(p));
      }
      return Shape(s[0]->element_type(), dims);
    }
    case HloOpcode::kReverse: {
      for (int64_t d : RequireInts(op, s, a, AttrKey::kDimensions))
        CheckDim(op, s, d, s[0]->rank(), "dimension");
      return *s[0];
    }
    case HloOpcode::kConcatenate: {
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      if (dims.size() != 1) Fail(op, s, "needs dimensions={d}");
      if (s.empty()) Fail(op, s, "needs at least one operand");
      const int64_t d = dims[0];
      CheckDim(op, s, d, s[0]->rank(), "dimension");
      std::vector<int64_t> out = s[0]->dimensions();
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i]->rank() != s[0]->rank() || s[i]->element_type() != s[0]->element_type()) {
          Fail(op, s, "operands must have the same rank and element type");
        }
        for (int64_t k = 0; k < s[0]->rank(); ++k) {
          if (k != d && s[i]->dimensions(k) != s[0]->dimensions(k))
            Fail(op, s, "operands differ outside the concatenated dimension");
        }
        out[d] += s[i]->dimensions(d);
      }
      return Shape(s[0]->element_type(), out);
    }
    case HloOpcode::kPad: {
      const auto* p = a.Find(AttrKey::kPadding);
      if (!p) Fail(op, s, "needs padding=");
      const auto& padding = std::get<PaddingConfig>(*p);
      if (static_cast<int64_t>(padding.size()) != s[0]->rank())
        Fail(op, s, "padding needs one entry per dimension");
      if (s[1]->rank() != 0 || s[1]->element_type() != s[0]->element_type())
        Fail(op, s, "the padding value must be a scalar of the operand's type");
      std::vector<int64_t> out;
      for (int64_t i = 0; i < s[0]->rank(); ++i) {
        const PaddingDim& pd = padding[i];
        if (pd.interior < 0) Fail(op, s, "interior padding must be non-negative");
        const int64_t n = s[0]->dimensions(i);
        int64_t size = pd.low + pd.high + n + std::max<int64_t>(n - 1, 0) * pd.interior;
        if (size < 0) Fail(op, s, "padding makes dimension " + std::to_string(i) + " negative");
        out.push_back(size);
      }
      return Shape(s[0]->element_type(), out);
    }
    case HloOpcode::kSlice: {
      const auto* r = a.Find(AttrKey::kSlice);
      if (!r) Fail(op, s, "needs slice=");
      const auto& ranges = std::get<std::vector<SliceRange>>(*r);
      if (static_cast<int64_t>(ranges.size()) != s[0]->rank())
        Fail(op, s, "slice needs one range per dimension");
      std::vector<int64_t> out;
      for (int64_t i = 0; i < s[0]->rank(); ++i) {
        const SliceRange& sr = ranges[i];
        if (sr.start < 0 || sr.limit > s[0]->dimensions(i) || sr.start > sr.limit ||
            sr.stride <= 0) {
          Fail(op, s,
               "slice range [" + std::to_string(sr.start) + ":" + std::to_string(sr.limit) +
                   "] is invalid for dimension " + std::to_string(i));
        }
        out.push_back((sr.limit - sr.start + sr.stride - 1) / sr.stride);
      }
      return Shape(s[0]->element_type(), out);
    }
    case HloOpcode::kDynamicSlice: {
      auto sizes = RequireInts(op, s, a, AttrKey::kDynamicSliceSizes);
      if (static_cast<int64_t>(sizes.size()) != s[0]->rank())
        Fail(op, s, "dynamic_slice_sizes needs one entry per dimension");
      for (int64_t i = 0; i < s[0]->rank(); ++i) {
        if (sizes[i] < 0 || sizes[i] > s[0]->dimensions(i))
          Fail(op, s, "slice size exceeds the operand");
      }
      return Shape(s[0]->element_type(), sizes);
    }
    case HloOpcode::kDynamicUpdateSlice:
      return *s[0];
    case HloOpcode::kDot:
      return InferDot(op, s, a);
    case HloOpcode::kConvolution:
      return InferConvolution(op, s, a);
    case HloOpcode::kGather:
      return InferGather(op, s, a);
    case HloOpcode::kFft:
      return InferFft(op, s, a);
    case HloOpcode::kReduce: {
      if (s.size() % 2 != 0 || s.empty())
        Fail(op, s, "needs inputs followed by as many init values");
      const size_t n = s.size() / 2;
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      for (int64_t d : dims) CheckDim(op, s, d, s[0]->rank(), "dimension");
      std::vector<Shape> outs;
      for (size_t i = 0; i < n; ++i) {
        if (s[i]->dimensions() != s[0]->dimensions())
          Fail(op, s, "inputs must have the same dimensions");
        outs.push_back(ReduceShape(*s[0], dims, s[n + i]->element_type()));
      }
      return n == 1 ? outs[0] : Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kReduceWindow: {
      if (s.size() % 2 != 0 || s.empty())
        Fail(op, s, "needs inputs followed by as many init values");
      const size_t n = s.size() / 2;
      const auto* w = a.Find(AttrKey::kWindow);
      if (!w) Fail(op, s, "needs window=");
      const Window& window = std::get<Window>(*w);
      if (static_cast<int64_t>(window.dimensions.size()) != s[0]->rank())
        Fail(op, s, "the window needs one dimension per operand dimension");
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < s[0]->rank(); ++i)
        dims.push_back(WindowedSize(s[0]->dimensions(i), window.dimensions[i]));
      std::vector<Shape> outs;
      for (size_t i = 0; i < n; ++i) outs.emplace_back(s[n + i]->element_type(), dims);
      return n == 1 ? outs[0] : Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kSelectAndScatter:
      return *s[0];
    case HloOpcode::kScatter: {
      if (s.size() < 3 || (s.size() - 1) % 2 != 0)
        Fail(op, s, "needs operands, indices and as many updates");
      const size_t n = (s.size() - 1) / 2;
      if (n == 1) return *s[0];
      std::vector<Shape> outs;
      for (size_t i = 0; i < n; ++i) outs.push_back(*s[i]);
      return Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kSort: {
      if (s.empty()) Fail(op, s, "needs at least one operand");
      for (const Shape* x : s) {
        if (x->dimensions() != s[0]->dimensions())
          Fail(op, s, "operands must have the same dimensions");
      }
      if (s.size() == 1) return *s[0];
      std::vector<Shape> outs;
      for (const Shape* x : s) outs.push_back(*x);
      return Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kMap: {
      HloComputation* c = Computation(a, AttrKey::kToApply);
      if (!c || s.empty()) return std::nullopt;
      return WithType(*s[0], c->root()->shape().element_type());
    }
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      HloComputation* c =
          Computation(a, op == HloOpcode::kCall ? AttrKey::kToApply : AttrKey::kCalls);
      if (!c) return std::nullopt;
      Shape out = c->root()->shape();
      out.ClearLayouts();
      return out;
    }
    case HloOpcode::kWhile:
      return *s[0];
    case HloOpcode::kConditional: {
      std::vector<HloComputation*> branches;
      if (auto b = a.GetOr<std::vector<HloComputation*>>(AttrKey::kBranchComputations))
        branches = *b;
      if (HloComputation* t = Computation(a, AttrKey::kTrueComputation)) branches.push_back(t);
      if (branches.empty()) return std::nullopt;
      Shape out = branches[0]->root()->shape();
      out.ClearLayouts();
      return out;
    }
    case HloOpcode::kBatchNormInference:
      return *s[0];
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad: {
      auto fi = a.GetOr<int64_t>(AttrKey::kFeatureIndex);
      if (!fi) Fail(op, s, "needs feature_index=");
      CheckDim(op, s, *fi, s[0]->rank(), "feature_index");
      Shape feature(s[0]->element_type(), {s[0]->dimensions(*fi)});
      return Shape::Tuple({*s[0], feature, feature});
    }
    case HloOpcode::kCholesky:
      return *s[0];
    case HloOpcode::kTriangularSolve:
      return *s[1];
    case HloOpcode::kTopK: {
      auto k = a.GetOr<int64_t>(AttrKey::kK);
      if (!k) Fail(op, s, "needs k=");
      if (s[0]->rank() == 0) Fail(op, s, "needs a non-scalar operand");
      std::vector<int64_t> dims = s[0]->dimensions();
      if (*k < 0 || *k > dims.back())
        Fail(op, s, "k=" + std::to_string(*k) + " exceeds the last dimension");
      dims.back() = *k;
      return Shape::Tuple({Shape(s[0]->element_type(), dims), Shape(PrimitiveType::kS32, dims)});
    }
    case HloOpcode::kSetDimensionSize: {
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      Shape out = *s[0];
      for (int64_t d : dims) {
        CheckDim(op, s, d, out.rank(), "dimension");
        out.set_dynamic_dimension(d, true);
      }
      return out;
    }
    case HloOpcode::kAsyncUpdate:
      return *s[0];
    case HloOpcode::kAllReduce: {
      // One result per operand, of the operand's shape.
      if (s.empty()) Fail(op, s, "needs at least one operand");
      if (s.size() == 1) return *s[0];
      std::vector<Shape> outs;
      for (const Shape* x : s) outs.push_back(*x);
      return Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kCollectivePermute:
      return s.size() == 1 ? std::optional<Shape>(*s[0]) : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace uir::hlo
