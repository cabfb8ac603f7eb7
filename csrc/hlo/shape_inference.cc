// Shape inference by opcode family: the dispatcher, elementwise ops and data
// movement here; indexing ops in shape_inference_indexing.cc; dot,
// convolution, fft, linear algebra and rng in shape_inference_linalg.cc.
// Every rule checks what it relies on and throws ShapeError naming the opcode
// and the operand shapes.
#include "hlo/shape_inference.h"

#include <algorithm>
#include <sstream>

#include "hlo/computation.h"
#include "hlo/shape_inference_internal.h"
#include "support/error.h"

namespace uir::hlo {
namespace infer {

void Fail(HloOpcode op, const Shapes& s, const std::string& why) {
  std::ostringstream os;
  os << OpcodeName(op) << "(";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i]->Describe();
  os << "): " << why;
  throw ShapeError(os.str());
}

void RequireArray(HloOpcode op, const Shapes& s, size_t i) {
  if (!s[i]->IsArray()) Fail(op, s, "operand " + std::to_string(i) + " must be an array");
}

void RequireArrays(HloOpcode op, const Shapes& s) {
  for (size_t i = 0; i < s.size(); ++i) RequireArray(op, s, i);
}

void RequireSameDims(HloOpcode op, const Shapes& s, size_t a, size_t b) {
  if (s[a]->dimensions() != s[b]->dimensions()) {
    Fail(op, s,
         "operands " + std::to_string(a) + " and " + std::to_string(b) +
             " must have the same dimensions");
  }
}

void RequireScalar(HloOpcode op, const Shapes& s, size_t i, const char* what) {
  if (!s[i]->IsArray() || s[i]->rank() != 0)
    Fail(op, s, std::string(what) + " (operand " + std::to_string(i) + ") must be a scalar");
}

void RequireIntegral(HloOpcode op, const Shapes& s, size_t i, const char* what) {
  if (!s[i]->IsArray() || !IsInteger(s[i]->element_type()))
    Fail(op, s, std::string(what) + " (operand " + std::to_string(i) + ") must be integers");
}

void CheckDim(HloOpcode op, const Shapes& s, int64_t d, int64_t rank, const char* what) {
  if (d < 0 || d >= rank) {
    Fail(op, s,
         std::string(what) + " " + std::to_string(d) + " is out of range for rank " +
             std::to_string(rank));
  }
}

void CheckDimList(HloOpcode op, const Shapes& s, const std::vector<int64_t>& dims, int64_t rank,
                  const char* what, bool sorted) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    CheckDim(op, s, dims[i], rank, what);
    if (seen[dims[i]]) Fail(op, s, std::string(what) + " " + std::to_string(dims[i]) + " repeats");
    seen[dims[i]] = true;
    if (sorted && i > 0 && dims[i] < dims[i - 1])
      Fail(op, s, std::string(what) + "s must be sorted");
  }
}

const std::vector<int64_t>* Ints(const AttributeMap& a, AttrKey k) {
  const AttrValue* v = a.Find(k);
  return v ? std::get_if<std::vector<int64_t>>(v) : nullptr;
}

std::vector<int64_t> IntsOr(const AttributeMap& a, AttrKey k) {
  const auto* v = Ints(a, k);
  return v ? *v : std::vector<int64_t>{};
}

std::vector<int64_t> RequireInts(HloOpcode op, const Shapes& s, const AttributeMap& a, AttrKey k) {
  const auto* v = Ints(a, k);
  if (!v) Fail(op, s, "needs " + std::string(AttrName(k)) + "={...}");
  return *v;
}

int64_t RequireInt(HloOpcode op, const Shapes& s, const AttributeMap& a, AttrKey k) {
  auto v = a.GetOr<int64_t>(k);
  if (!v) Fail(op, s, "needs " + std::string(AttrName(k)) + "=");
  return *v;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

int64_t AddSize(HloOpcode op, const Shapes& s, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) Fail(op, s, "a dimension size overflows");
  return r;
}

int64_t MulSize(HloOpcode op, const Shapes& s, int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) Fail(op, s, "a dimension size overflows");
  return r;
}

Shape WithType(const Shape& like, PrimitiveType type) {
  Shape out(type, like.dimensions());
  for (int64_t i = 0; i < like.rank(); ++i)
    out.set_dynamic_dimension(i, like.is_dynamic_dimension(i));
  return out;
}

int64_t WindowedSize(HloOpcode op, const Shapes& s, int64_t n, const WindowDim& w) {
  if (w.size <= 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) {
    Fail(op, s, "window sizes, strides and dilations must be positive");
  }
  const int64_t dilated_base =
      n == 0 ? 0 : AddSize(op, s, MulSize(op, s, n - 1, w.base_dilation), 1);
  const int64_t padded =
      AddSize(op, s, AddSize(op, s, dilated_base, w.padding_low), w.padding_high);
  const int64_t dilated_window = AddSize(op, s, MulSize(op, s, w.size - 1, w.window_dilation), 1);
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

}  // namespace infer

namespace {

using namespace infer;  // NOLINT(google-build-using-namespace): the family helpers

HloComputation* Computation(const AttributeMap& a, AttrKey k) {
  auto c = a.GetOr<HloComputation*>(k);
  return c ? *c : nullptr;
}

bool IsFloatOrComplex(PrimitiveType t) { return IsFloat(t) || IsComplex(t); }

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
  std::vector<bool> dynamic;
  for (int64_t i = 0; i < input.rank(); ++i) {
    if (!Contains(dims, i)) {
      out.push_back(input.dimensions(i));
      dynamic.push_back(input.is_dynamic_dimension(i));
    }
  }
  Shape result(type, out);
  for (size_t i = 0; i < dynamic.size(); ++i)
    result.set_dynamic_dimension(static_cast<int64_t>(i), dynamic[i]);
  return result;
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
      if (!s[1]->IsToken()) Fail(op, s, "operand 1 must be a token");
      return *s[0];
    case HloOpcode::kAfterAll:
      for (const Shape* x : s) {
        if (!x->IsToken()) Fail(op, s, "operands must be tokens");
      }
      return Shape::Token();
    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      return Shape(PrimitiveType::kU32, {});
    case HloOpcode::kGetDimensionSize: {
      RequireArray(op, s, 0);
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      if (dims.size() != 1) Fail(op, s, "needs exactly one dimension in dimensions={d}");
      CheckDim(op, s, dims[0], s[0]->rank(), "dimension");
      return Shape(PrimitiveType::kS32, {});
    }
    case HloOpcode::kSetDimensionSize: {
      RequireArray(op, s, 0);
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      if (dims.size() != 1) Fail(op, s, "needs exactly one dimension in dimensions={d}");
      CheckDim(op, s, dims[0], s[0]->rank(), "dimension");
      if (!s[1]->IsArray() || s[1]->rank() != 0 || s[1]->element_type() != PrimitiveType::kS32)
        Fail(op, s, "the size (operand 1) must be an s32[] scalar");
      Shape out = *s[0];
      out.set_dynamic_dimension(dims[0], true);
      return out;
    }
    case HloOpcode::kTuple: {
      std::vector<Shape> elements;
      for (const Shape* x : s) elements.push_back(*x);
      return Shape::Tuple(std::move(elements));
    }
    case HloOpcode::kGetTupleElement: {
      const int64_t index = RequireInt(op, s, a, AttrKey::kIndex);
      if (!s[0]->IsTuple()) Fail(op, s, "needs a tuple operand");
      if (index < 0 || index >= s[0]->tuple_shapes_size())
        Fail(op, s, "index " + std::to_string(index) + " is out of range");
      return s[0]->tuple_shapes(index);
    }
    case HloOpcode::kTranspose: {
      RequireArray(op, s, 0);
      auto perm = RequireInts(op, s, a, AttrKey::kDimensions);
      if (static_cast<int64_t>(perm.size()) != s[0]->rank())
        Fail(op, s, "dimensions must be a permutation of the operand's");
      CheckDimList(op, s, perm, s[0]->rank(), "permutation entry");
      Shape out(s[0]->element_type(), {});
      std::vector<int64_t> dims;
      for (int64_t p : perm) dims.push_back(s[0]->dimensions(p));
      out.set_dimensions(dims);
      for (size_t i = 0; i < perm.size(); ++i)
        out.set_dynamic_dimension(static_cast<int64_t>(i), s[0]->is_dynamic_dimension(perm[i]));
      return out;
    }
    case HloOpcode::kReverse:
      RequireArray(op, s, 0);
      CheckDimList(op, s, RequireInts(op, s, a, AttrKey::kDimensions), s[0]->rank(), "dimension");
      return *s[0];
    case HloOpcode::kConcatenate: {
      if (s.empty()) Fail(op, s, "needs at least one operand");
      RequireArrays(op, s);
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      if (dims.size() != 1) Fail(op, s, "needs dimensions={d}");
      const int64_t d = dims[0];
      CheckDim(op, s, d, s[0]->rank(), "dimension");
      Shape out = *s[0];
      std::vector<int64_t> sizes = s[0]->dimensions();
      for (size_t i = 1; i < s.size(); ++i) {
        if (s[i]->rank() != s[0]->rank() || s[i]->element_type() != s[0]->element_type()) {
          Fail(op, s, "operands must have the same rank and element type");
        }
        for (int64_t k = 0; k < s[0]->rank(); ++k) {
          if (k != d && s[i]->dimensions(k) != s[0]->dimensions(k))
            Fail(op, s, "operands differ outside the concatenated dimension");
        }
        sizes[d] = AddSize(op, s, sizes[d], s[i]->dimensions(d));
        if (s[i]->is_dynamic_dimension(d)) out.set_dynamic_dimension(d, true);
      }
      std::vector<bool> dynamic = out.dynamic_dimensions();
      out.set_dimensions(sizes);
      for (size_t k = 0; k < dynamic.size(); ++k)
        out.set_dynamic_dimension(static_cast<int64_t>(k), dynamic[k]);
      out.clear_layout();
      return out;
    }
    case HloOpcode::kPad: {
      RequireArrays(op, s);
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
        const int64_t interior = MulSize(op, s, std::max<int64_t>(n - 1, 0), pd.interior);
        const int64_t size =
            AddSize(op, s, AddSize(op, s, AddSize(op, s, pd.low, pd.high), n), interior);
        if (size < 0) Fail(op, s, "padding makes dimension " + std::to_string(i) + " negative");
        out.push_back(size);
      }
      Shape result(s[0]->element_type(), out);
      for (int64_t i = 0; i < s[0]->rank(); ++i)
        result.set_dynamic_dimension(i, s[0]->is_dynamic_dimension(i));
      return result;
    }
    case HloOpcode::kSlice: {
      RequireArray(op, s, 0);
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
        out.push_back(sr.limit > sr.start ? (sr.limit - sr.start - 1) / sr.stride + 1 : 0);
      }
      return Shape(s[0]->element_type(), out);
    }
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice(op, s, a);
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(op, s);
    case HloOpcode::kDot:
      return InferDot(op, s, a);
    case HloOpcode::kConvolution:
      return InferConvolution(op, s, a);
    case HloOpcode::kGather:
      return InferGather(op, s, a);
    case HloOpcode::kScatter:
      return InferScatter(op, s, a);
    case HloOpcode::kFft:
      return InferFft(op, s, a);
    case HloOpcode::kReduce: {
      if (s.size() % 2 != 0 || s.empty())
        Fail(op, s, "needs inputs followed by as many init values");
      RequireArrays(op, s);
      const size_t n = s.size() / 2;
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      CheckDimList(op, s, dims, s[0]->rank(), "dimension");
      std::vector<Shape> outs;
      for (size_t i = 0; i < n; ++i) {
        if (s[i]->dimensions() != s[0]->dimensions())
          Fail(op, s, "inputs must have the same dimensions");
        if (s[n + i]->rank() != 0) Fail(op, s, "init values must be scalars");
        if (s[i]->element_type() != s[n + i]->element_type())
          Fail(op, s, "each input must have its init value's element type");
        outs.push_back(ReduceShape(*s[i], dims, s[n + i]->element_type()));
      }
      return n == 1 ? outs[0] : Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(op, s, a);
    case HloOpcode::kSelectAndScatter:
      return InferSelectAndScatter(op, s, a);
    case HloOpcode::kSort: {
      if (s.empty()) Fail(op, s, "needs at least one operand");
      RequireArrays(op, s);
      for (const Shape* x : s) {
        if (x->dimensions() != s[0]->dimensions())
          Fail(op, s, "operands must have the same dimensions");
      }
      auto dims = RequireInts(op, s, a, AttrKey::kDimensions);
      if (dims.size() != 1) Fail(op, s, "needs exactly one dimension in dimensions={d}");
      CheckDim(op, s, dims[0], s[0]->rank(), "sort dimension");
      if (s.size() == 1) return *s[0];
      std::vector<Shape> outs;
      for (const Shape* x : s) outs.push_back(*x);
      return Shape::Tuple(std::move(outs));
    }
    case HloOpcode::kMap: {
      if (s.empty()) Fail(op, s, "needs at least one operand");
      RequireArrays(op, s);
      for (size_t i = 1; i < s.size(); ++i) RequireSameDims(op, s, 0, i);
      if (const auto* dims = Ints(a, AttrKey::kDimensions)) {
        // XLA maps over every dimension, in order.
        bool all = static_cast<int64_t>(dims->size()) == s[0]->rank();
        for (size_t i = 0; all && i < dims->size(); ++i)
          all = (*dims)[i] == static_cast<int64_t>(i);
        if (!all) Fail(op, s, "dimensions= must list every operand dimension in order");
      }
      HloComputation* c = Computation(a, AttrKey::kToApply);
      if (!c) return std::nullopt;
      if (!c->root()->shape().IsArray()) Fail(op, s, "to_apply must return a scalar");
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
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormGrad:
      return InferBatchNorm(op, s, a);
    case HloOpcode::kCholesky:
      return InferCholesky(op, s);
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolve(op, s, a);
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kStochasticConvert:
      return InferRng(op, s, a);
    case HloOpcode::kTopK: {
      RequireArray(op, s, 0);
      const int64_t k = RequireInt(op, s, a, AttrKey::kK);
      if (s[0]->rank() == 0) Fail(op, s, "needs a non-scalar operand");
      std::vector<int64_t> dims = s[0]->dimensions();
      if (k < 0 || k > dims.back())
        Fail(op, s, "k=" + std::to_string(k) + " exceeds the last dimension");
      dims.back() = k;
      return Shape::Tuple({Shape(s[0]->element_type(), dims), Shape(PrimitiveType::kS32, dims)});
    }
    case HloOpcode::kCopyStart:
      // (destination, source, context): XLA's u32[] context.
      return Shape::Tuple({*s[0], *s[0], Shape(PrimitiveType::kU32, {})});
    case HloOpcode::kCopyDone: {
      const Shape& t = *s[0];
      if (!t.IsTuple() || t.tuple_shapes_size() != 3 ||
          !t.tuple_shapes(0).Compatible(t.tuple_shapes(1)))
        Fail(op, s, "needs the (destination, source, context) tuple of a copy-start");
      return t.tuple_shapes(0);
    }
    case HloOpcode::kAsyncUpdate:
      return *s[0];
    case HloOpcode::kAllReduce: {
      // One result per operand, of the operand's shape.
      if (s.empty()) Fail(op, s, "needs at least one operand");
      RequireArrays(op, s);
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
