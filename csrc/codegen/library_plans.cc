// The plans of the nodes the runtime's library loops run (runtime/window.h,
// arg_reduce.h, gather.h, scatter.h, fft.h, rng_bits.h; sorts and topk in
// sort_plans.cc), asked by
// the Kernel Graph's lowering (CpuLibrary) and the thunk emitter: each
// node's plan, where its op is one of the forms those loops take. Reducers
// and sort comparators are recognised by evaluating them on every class of
// input, not by their spelling.
#include "codegen/library_plans.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "codegen/plan_scalars.h"
#include "hlo/reduction_kind.h"
#include "igraph/tile_program.h"

namespace uir::codegen {

using hlo::HloInstruction;
using hlo::HloOpcode;
using igraph::IsRowMajorTensor;
using igraph::KernelNode;
using igraph::PhysicalStrides;

std::optional<runtime::FoldOp> FoldOpOf(const hlo::HloComputation& reducer) {
  // The runtime's folds: every reduction kind but xor, by the runtime's
  // own names for them (it knows no HLO).
  const std::optional<hlo::ReductionKind> kind = hlo::ReducerKind(reducer);
  if (!kind) return std::nullopt;
  switch (*kind) {
    case hlo::ReductionKind::kAdd:
      return runtime::FoldOp::kAdd;
    case hlo::ReductionKind::kMultiply:
      return runtime::FoldOp::kMultiply;
    case hlo::ReductionKind::kMaximum:
      return runtime::FoldOp::kMaximum;
    case hlo::ReductionKind::kMinimum:
      return runtime::FoldOp::kMinimum;
    case hlo::ReductionKind::kAnd:
      return runtime::FoldOp::kAnd;
    case hlo::ReductionKind::kOr:
      return runtime::FoldOp::kOr;
    case hlo::ReductionKind::kXor:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<NodeFft> FftOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kFft || !inst->shape().IsArray() ||
      n.inputs.size() != 1 || n.outputs.size() != 1 || !n.igraphs.empty() ||
      !IsRowMajorTensor(n.inputs[0]) || !IsRowMajorTensor(n.outputs[0])) {
    return std::nullopt;
  }
  NodeFft f{{}, n.inputs[0], n.outputs[0]};
  const auto& length = inst->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kFftLength);
  runtime::FftPlan& p = f.plan;
  switch (inst->attributes().GetEnum<hlo::FftType>(hlo::AttrKey::kFftType)) {
    case hlo::FftType::kFft:
      p.kind = runtime::FftKind::kFft;
      break;
    case hlo::FftType::kIfft:
      p.kind = runtime::FftKind::kIfft;
      break;
    case hlo::FftType::kRfft:
      p.kind = runtime::FftKind::kRfft;
      break;
    case hlo::FftType::kIrfft:
      p.kind = runtime::FftKind::kIrfft;
      break;
  }
  // The real side (RFFT's input, IRFFT's output) sets the precision.
  const hlo::Shape& real = p.kind == runtime::FftKind::kIrfft ? f.out.shape : f.input.shape;
  const hlo::Shape& complex = p.kind == runtime::FftKind::kIrfft ? f.input.shape : f.out.shape;
  const PrimitiveType c = complex.element_type();
  if (c != PrimitiveType::kC64 && c != PrimitiveType::kC128) return std::nullopt;
  p.f64 = c == PrimitiveType::kC128;
  const PrimitiveType want = p.kind == runtime::FftKind::kRfft || p.kind == runtime::FftKind::kIrfft
                                 ? (p.f64 ? PrimitiveType::kF64 : PrimitiveType::kF32)
                                 : c;
  if (real.element_type() != want) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(length.size());
  if (rank < 1 || rank > 3 || real.rank() < rank || real.rank() != complex.rank()) {
    return std::nullopt;
  }
  p.rank = static_cast<int>(rank);
  const int64_t lead = real.rank() - rank;
  for (int64_t d = 0; d < lead; ++d) p.batch *= real.dimensions(d);
  for (int64_t d = 0; d < rank; ++d) {
    p.length[static_cast<size_t>(d)] = length[static_cast<size_t>(d)];
    if (real.dimensions(lead + d) != length[static_cast<size_t>(d)]) return std::nullopt;
  }
  if (!p.Invalid().empty() || p.InputElements() != f.input.shape.element_count() ||
      p.OutputElements() != f.out.shape.element_count()) {
    return std::nullopt;
  }
  return f;
}

std::optional<NodeRngBits> RngBitsOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kRngBitGenerator || n.inputs.size() != 1 ||
      n.outputs.size() != 2 || !n.igraphs.empty()) {
    return std::nullopt;
  }
  NodeRngBits r{{}, n.inputs[0], n.outputs[0], n.outputs[1]};
  const hlo::Shape& state = r.state_in.shape;
  const hlo::Shape& bits = r.bits.shape;
  const PrimitiveType t = bits.element_type();
  if (state.element_type() != PrimitiveType::kU64 || state.rank() != 1 ||
      r.state_out.shape.element_type() != PrimitiveType::kU64 ||
      r.state_out.shape.element_count() != state.element_count() || !IsRowMajorTensor(r.bits) ||
      t == PrimitiveType::kPred || IsComplex(t) || BitWidth(t) != 8 * StorageBytes(t)) {
    return std::nullopt;
  }
  const std::string algorithm =
      inst->attributes().GetOr<std::string>(hlo::AttrKey::kAlgorithm).value_or("rng_default");
  r.plan.algorithm = algorithm == "rng_three_fry" ? runtime::BitAlgorithm::kThreefry
                                                  : runtime::BitAlgorithm::kPhilox;
  r.plan.state_words = static_cast<int>(state.element_count());
  r.plan.bytes = static_cast<int>(StorageBytes(t));
  r.plan.dims = bits.dimensions();
  if (!r.plan.Invalid().empty()) return std::nullopt;
  return r;
}

std::optional<NodeRng> RngOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kRng || n.inputs.size() != 2 ||
      n.outputs.size() != 1 || !n.igraphs.empty()) {
    return std::nullopt;
  }
  NodeRng r{{}, n.inputs[0], n.inputs[1], n.outputs[0]};
  const PrimitiveType t = r.out.shape.element_type();
  if (r.a.shape.element_type() != t || r.b.shape.element_type() != t ||
      r.a.shape.element_count() != 1 || r.b.shape.element_count() != 1 ||
      !IsRowMajorTensor(r.out)) {
    return std::nullopt;
  }
  const auto dist =
      inst->attributes().GetEnum<hlo::RandomDistribution>(hlo::AttrKey::kDistribution);
  r.plan.distribution = dist == hlo::RandomDistribution::kNormal
                            ? runtime::RngDistribution::kNormal
                            : runtime::RngDistribution::kUniform;
  r.plan.type = t;
  r.plan.elements = r.out.shape.element_count();
  // FNV-1a of the name: each rng of a module draws its own numbers.
  uint64_t key = 0xCBF29CE484222325ull;
  for (unsigned char ch : inst->name()) key = (key ^ ch) * 0x100000001B3ull;
  r.plan.key = key;
  if (!r.plan.Invalid().empty()) return std::nullopt;
  return r;
}

std::optional<NodeWindow> WindowOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kReduceWindow || inst->operand_count() != 2 ||
      !inst->shape().IsArray() || n.inputs.size() != 2 || n.outputs.size() != 1 ||
      !n.igraphs.empty()) {
    return std::nullopt;
  }
  NodeWindow w{{}, n.inputs[0], n.inputs[1], n.outputs[0]};
  const PrimitiveType t = w.out.shape.element_type();
  // pred takes a byte, 0 or 1; sub-byte integers are left to kernels.
  if (w.input.shape.element_type() != t || w.init.shape.element_type() != t ||
      w.init.shape.rank() != 0 ||
      (BitWidth(t) != 8 * StorageBytes(t) && t != PrimitiveType::kPred)) {
    return std::nullopt;
  }
  const std::optional<runtime::FoldOp> op =
      FoldOpOf(*inst->attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kToApply));
  if (!op) return std::nullopt;
  const auto& window = inst->attributes().Get<hlo::Window>(hlo::AttrKey::kWindow).dimensions;
  const int64_t rank = w.input.shape.rank();
  if (rank > runtime::WindowPlan::kMaxRank || static_cast<int64_t>(window.size()) != rank ||
      w.out.shape.rank() != rank) {
    return std::nullopt;
  }
  runtime::WindowPlan& p = w.plan;
  p.type = t;
  p.op = *op;
  p.rank = static_cast<int>(rank);
  const std::vector<int64_t> is = PhysicalStrides(w.input.shape);
  const std::vector<int64_t> os = PhysicalStrides(w.out.shape);
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    const hlo::WindowDim& wd = window[d];
    if (wd.window_reversal) return std::nullopt;
    p.in_size[d] = w.input.shape.dimensions()[d];
    p.out_size[d] = w.out.shape.dimensions()[d];
    p.window[d] = wd.size;
    p.stride[d] = wd.stride;
    p.pad_low[d] = wd.padding_low;
    p.base_dilation[d] = wd.base_dilation;
    p.window_dilation[d] = wd.window_dilation;
    p.in_stride[d] = is[d];
    p.out_stride[d] = os[d];
  }
  if (!p.Invalid().empty()) return std::nullopt;
  return w;
}

int64_t TotalOrderKey(double v) {
  const auto bits = std::bit_cast<uint64_t>(v);
  // Only the sign, the class and the order matter: zeros, infinities and
  // NaNs map apart, finite values keep their order.
  const bool negative = (bits >> 63) != 0;
  int64_t rank;
  if (std::isnan(v)) {
    rank = 4;
  } else if (std::isinf(v)) {
    rank = 3;
  } else if (v == 0) {
    rank = 0;
  } else {
    rank = 1;
  }
  const double magnitude = std::isfinite(v) ? std::fabs(v) : 0;
  const int64_t key = rank * (int64_t{1} << 40) + static_cast<int64_t>(magnitude * 1024);
  return negative ? -key - 1 : key;
}

bool EvalPick(const HloInstruction* inst, const std::vector<Scalar>& params,
              std::map<const HloInstruction*, std::vector<Scalar>>& memo,
              std::vector<Scalar>& out) {
  if (auto it = memo.find(inst); it != memo.end()) {
    out = it->second;
    return true;
  }
  std::vector<std::vector<Scalar>> ops;
  for (const HloInstruction* o : inst->operands()) {
    std::vector<Scalar> v;
    if (!EvalPick(o, params, memo, v)) return false;
    ops.push_back(std::move(v));
  }
  auto one = [&](size_t k) -> const Scalar& { return ops[k].at(0); };
  Scalar r;
  switch (inst->opcode()) {
    case HloOpcode::kParameter: {
      const auto k = static_cast<size_t>(inst->parameter_number());
      if (k >= params.size()) return false;
      out = {params[k]};
      break;
    }
    case HloOpcode::kConstant: {
      const hlo::Literal& value = inst->literal();
      if (!inst->shape().IsArray() || inst->shape().rank() != 0) return false;
      const PrimitiveType t = inst->shape().element_type();
      if (t == PrimitiveType::kPred) {
        r.truth = value.GetInt64(0) != 0;
      } else if (IsFloat(t) || IsInteger(t)) {
        r.number = IsFloat(t) ? value.GetDouble(0) : static_cast<double>(value.GetInt64(0));
      } else {
        return false;
      }
      out = {r};
      break;
    }
    case HloOpcode::kCompare: {
      const auto type =
          inst->attributes().GetEnumOr<hlo::ComparisonType>(hlo::AttrKey::kCompareType);
      double a = one(0).number, b = one(1).number;
      if (type && *type == hlo::ComparisonType::kTotalOrder) {
        // Compared as their total-order keys (exact in a double).
        a = static_cast<double>(TotalOrderKey(a));
        b = static_cast<double>(TotalOrderKey(b));
      }
      switch (inst->attributes().GetEnum<hlo::ComparisonDirection>(hlo::AttrKey::kDirection)) {
        case hlo::ComparisonDirection::kEq:
          r.truth = a == b;
          break;
        case hlo::ComparisonDirection::kNe:
          r.truth = a != b;
          break;
        case hlo::ComparisonDirection::kGe:
          r.truth = a >= b;
          break;
        case hlo::ComparisonDirection::kGt:
          r.truth = a > b;
          break;
        case hlo::ComparisonDirection::kLe:
          r.truth = a <= b;
          break;
        case hlo::ComparisonDirection::kLt:
          r.truth = a < b;
          break;
      }
      out = {r};
      break;
    }
    case HloOpcode::kAnd:
    case HloOpcode::kOr:
    case HloOpcode::kXor:
      if (inst->shape().element_type() != PrimitiveType::kPred) return false;
      r.truth = inst->opcode() == HloOpcode::kAnd  ? one(0).truth && one(1).truth
                : inst->opcode() == HloOpcode::kOr ? one(0).truth || one(1).truth
                                                   : one(0).truth != one(1).truth;
      out = {r};
      break;
    case HloOpcode::kNot:
      if (inst->shape().element_type() != PrimitiveType::kPred) return false;
      r.truth = !one(0).truth;
      out = {r};
      break;
    case HloOpcode::kSelect:
      out = {one(0).truth ? one(1) : one(2)};
      break;
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      r.number = inst->opcode() == HloOpcode::kReal ? one(0).number : one(0).imag;
      out = {r};
      break;
    case HloOpcode::kTuple:
      for (const std::vector<Scalar>& v : ops) out.push_back(v.at(0));
      break;
    default:
      return false;
  }
  memo[inst] = out;
  return true;
}

namespace {

// Whether `reducer` over (value, index, value, index) picks as argmax
// (argmin when !max) does, the first pair the accumulated one: on every
// class of value pair (less, equal, greater, either or both NaN) and index
// pair (the accumulated one lower, or equal), the value and the index it
// returns are those the arg-reduce semantics names (either, where both
// candidates are the same).
bool PicksExtreme(const hlo::HloComputation& reducer, bool floats, bool max) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double a, b;
    int winner;  // 0: the accumulated pair, 1: the next, 2: by index
  };
  std::vector<Case> cases = {{1, 2, max ? 1 : 0}, {2, 1, max ? 0 : 1}, {2, 2, 2}};
  if (floats) {
    cases.push_back({nan, 1, 0});
    cases.push_back({1, nan, 1});
    cases.push_back({nan, nan, 2});
  }
  for (const Case& c : cases) {
    for (const auto& [ia, ib] : {std::pair<double, double>{0, 1}, {1, 1}}) {
      std::vector<Scalar> params(4);
      params[0].number = c.a;
      params[1].number = ia;
      params[2].number = c.b;
      params[3].number = ib;
      std::map<const HloInstruction*, std::vector<Scalar>> memo;
      std::vector<Scalar> out;
      if (!EvalPick(reducer.root(), params, memo, out) || out.size() != 2) return false;
      const double v = out[0].number, i = out[1].number;
      auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
      // The value must be one of the candidates, the index too.
      if (!same(v, c.a) && !same(v, c.b)) return false;
      if (i != ia && i != ib) return false;
      const int winner = c.winner == 2 ? 0 : c.winner;  // by index: the lower, the accumulated one
      const double want_v = winner == 0 ? c.a : c.b, want_i = winner == 0 ? ia : ib;
      if (!same(v, want_v) || i != want_i) return false;
    }
  }
  return true;
}

// Whether `index` holds, at every position, its coordinate along `dim`.
bool IsIotaAlong(const HloInstruction* index, int64_t dim) {
  // An output of a (multi-output) fusion: the fused instruction behind it.
  int64_t element = -1;
  if (index->opcode() == HloOpcode::kGetTupleElement &&
      index->operand(0)->opcode() == HloOpcode::kFusion) {
    element = index->attributes().Get<int64_t>(hlo::AttrKey::kIndex);
    index = index->operand(0);
  }
  if (index->opcode() == HloOpcode::kFusion) {
    index = index->called_computations().at(0)->root();
    if (element >= 0) {
      if (index->opcode() != HloOpcode::kTuple || element >= index->operand_count()) return false;
      index = index->operand(element);
    }
  } else if (element >= 0) {
    return false;
  }
  if (index->opcode() == HloOpcode::kIota) {
    return index->attributes().Get<int64_t>(hlo::AttrKey::kIotaDimension) == dim;
  }
  if (index->opcode() == HloOpcode::kBroadcast && index->operand(0)->opcode() == HloOpcode::kIota &&
      index->operand(0)->shape().rank() == 1) {
    const auto& map = index->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
    return map.size() == 1 && map[0] == dim;
  }
  return false;
}

}  // namespace

std::optional<NodeArgReduce> ArgReduceOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kReduce || inst->operand_count() != 4 ||
      n.inputs.size() != 4 || n.outputs.size() != 2 || !n.igraphs.empty()) {
    return std::nullopt;
  }
  const auto& dims = inst->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
  if (dims.size() != 1) return std::nullopt;
  const int64_t dim = dims[0];
  NodeArgReduce a{{}, n.inputs[0], n.inputs[2], n.inputs[3], n.outputs[0], n.outputs[1]};
  const hlo::Shape& vs = a.values.shape;
  const PrimitiveType vt = vs.element_type(), it = n.inputs[1].shape.element_type();
  if (n.inputs[1].shape.dimensions() != vs.dimensions() || a.init_value.shape.rank() != 0 ||
      a.init_index.shape.rank() != 0 || a.init_value.shape.element_type() != vt ||
      a.init_index.shape.element_type() != it || a.out_value.shape.element_type() != vt ||
      a.out_index.shape.element_type() != it || dim < 0 || dim >= vs.rank() ||
      vs.rank() - 1 > runtime::ArgReducePlan::kMaxKept || !IsIotaAlong(inst->operand(1), dim)) {
    return std::nullopt;
  }
  runtime::ArgReducePlan& p = a.plan;
  p.value_type = vt;
  p.index_type = it;
  const hlo::HloComputation& reducer =
      *inst->attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kToApply);
  const bool floats = IsFloat(vt);
  if (PicksExtreme(reducer, floats, true)) {
    p.max = true;
  } else if (PicksExtreme(reducer, floats, false)) {
    p.max = false;
  } else {
    return std::nullopt;
  }
  const std::vector<int64_t> is = PhysicalStrides(vs);
  const std::vector<int64_t> ovs = PhysicalStrides(a.out_value.shape);
  const std::vector<int64_t> ois = PhysicalStrides(a.out_index.shape);
  p.size = vs.dimensions()[static_cast<size_t>(dim)];
  p.in_stride = is[static_cast<size_t>(dim)];
  for (int64_t d = 0, k = 0; d < vs.rank(); ++d) {
    if (d == dim) continue;
    const auto kd = static_cast<size_t>(k);
    p.kept_size[kd] = vs.dimensions()[static_cast<size_t>(d)];
    p.kept_in[kd] = is[static_cast<size_t>(d)];
    p.kept_value_out[kd] = ovs[kd];
    p.kept_index_out[kd] = ois[kd];
    ++k;
  }
  p.kept = static_cast<int>(vs.rank() - 1);
  if (!p.Invalid().empty()) return std::nullopt;
  return a;
}

std::optional<NodeGather> GatherOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kGather || !n.igraphs.empty() ||
      n.inputs.size() != 2 || n.outputs.size() != 1) {
    return std::nullopt;
  }
  NodeGather g{{}, n.inputs[0], n.inputs[1], n.outputs[0]};
  const hlo::Shape& os = g.operand.shape;
  const hlo::Shape& is = g.indices.shape;
  const hlo::Shape& out = g.out.shape;
  const PrimitiveType t = out.element_type();
  constexpr int kMax = runtime::GatherPlan::kMaxRank;
  // Elements are copied as bytes: any type (pred and sub-byte types take
  // a byte each).
  if (os.element_type() != t || os.rank() > kMax || is.rank() > kMax || out.rank() > kMax) {
    return std::nullopt;
  }
  const auto& a = inst->attributes();
  auto list = [&](hlo::AttrKey key) {
    return a.GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
  };
  const std::vector<int64_t> offset_dims = list(hlo::AttrKey::kOffsetDims);
  const std::vector<int64_t> collapsed = list(hlo::AttrKey::kCollapsedSliceDims);
  const std::vector<int64_t> start_map = list(hlo::AttrKey::kStartIndexMap);
  const std::vector<int64_t> operand_batching = list(hlo::AttrKey::kOperandBatchingDims);
  const std::vector<int64_t> indices_batching = list(hlo::AttrKey::kStartIndicesBatchingDims);
  const std::vector<int64_t> slice_sizes = list(hlo::AttrKey::kSliceSizes);
  const int64_t ivd = a.Get<int64_t>(hlo::AttrKey::kIndexVectorDim);
  if (static_cast<int64_t>(slice_sizes.size()) != os.rank() || start_map.size() > kMax ||
      operand_batching.size() != indices_batching.size() || operand_batching.size() > kMax ||
      ivd < 0 || ivd > is.rank()) {
    return std::nullopt;
  }
  runtime::GatherPlan& p = g.plan;
  p.element_bytes = StorageBytes(t);
  p.index_type = is.element_type();
  p.operand_rank = static_cast<int>(os.rank());
  p.out_rank = static_cast<int>(out.rank());
  p.index_rank = static_cast<int>(is.rank());
  p.index_vector_dim = static_cast<int>(ivd);
  const int64_t vector = ivd < is.rank() ? is.dimensions()[static_cast<size_t>(ivd)] : 1;
  if (vector != static_cast<int64_t>(start_map.size())) return std::nullopt;
  p.index_count = static_cast<int>(start_map.size());
  const std::vector<int64_t> ost = PhysicalStrides(os), ist = PhysicalStrides(is),
                             outst = PhysicalStrides(out);
  for (size_t d = 0; d < static_cast<size_t>(os.rank()); ++d) {
    p.operand_size[d] = os.dimensions()[d];
    p.operand_stride[d] = ost[d];
    p.slice_size[d] = slice_sizes[d];
  }
  for (size_t d = 0; d < static_cast<size_t>(is.rank()); ++d) {
    p.index_size[d] = is.dimensions()[d];
    p.index_stride[d] = ist[d];
  }
  for (size_t k = 0; k < start_map.size(); ++k)
    p.start_index_map[k] = static_cast<int>(start_map[k]);
  p.batching = static_cast<int>(operand_batching.size());
  for (size_t k = 0; k < operand_batching.size(); ++k) {
    p.operand_batching[k] = static_cast<int>(operand_batching[k]);
    p.indices_batching[k] = static_cast<int>(indices_batching[k]);
  }
  // Offset dims walk the operand dims the slice keeps; batch dims the
  // indices dims other than the index vector's, both in order.
  std::vector<int> kept, batch;
  for (int d = 0; d < p.operand_rank; ++d) {
    const bool gone =
        std::find(collapsed.begin(), collapsed.end(), d) != collapsed.end() ||
        std::find(operand_batching.begin(), operand_batching.end(), d) != operand_batching.end();
    if (!gone) kept.push_back(d);
  }
  for (int d = 0; d < p.index_rank; ++d) {
    if (d != p.index_vector_dim) batch.push_back(d);
  }
  size_t next_kept = 0, next_batch = 0;
  for (size_t d = 0; d < static_cast<size_t>(out.rank()); ++d) {
    p.out_size[d] = out.dimensions()[d];
    p.out_stride[d] = outst[d];
    const bool offset = std::find(offset_dims.begin(), offset_dims.end(),
                                  static_cast<int64_t>(d)) != offset_dims.end();
    if (offset) {
      if (next_kept >= kept.size()) return std::nullopt;
      p.out_operand[d] = kept[next_kept++];
      p.out_index[d] = -1;
      if (p.out_size[d] != p.slice_size[static_cast<size_t>(p.out_operand[d])]) return std::nullopt;
    } else {
      if (next_batch >= batch.size()) return std::nullopt;
      p.out_index[d] = batch[next_batch++];
      p.out_operand[d] = -1;
      if (p.out_size[d] != p.index_size[static_cast<size_t>(p.out_index[d])]) return std::nullopt;
    }
  }
  if (next_kept != kept.size() || next_batch != batch.size() || !p.Invalid().empty()) {
    return std::nullopt;
  }
  return g;
}

std::optional<NodeScatter> ScatterOf(const KernelNode& n) {
  const HloInstruction* inst = n.instruction;
  if (inst == nullptr || inst->opcode() != HloOpcode::kScatter || inst->operand_count() != 3 ||
      !n.igraphs.empty() || n.inputs.size() != 3 || n.outputs.size() != 1) {
    return std::nullopt;
  }
  NodeScatter sc{{}, n.inputs[0], n.inputs[1], n.inputs[2], n.outputs[0]};
  const hlo::Shape& os = sc.operand.shape;
  const hlo::Shape& is = sc.indices.shape;
  const hlo::Shape& us = sc.updates.shape;
  const PrimitiveType t = sc.out.shape.element_type();
  constexpr int kMax = runtime::ScatterPlan::kMaxRank;
  if (os.element_type() != t || us.element_type() != t || os.rank() > kMax || is.rank() > kMax ||
      us.rank() > kMax || sc.out.shape.dimensions() != os.dimensions()) {
    return std::nullopt;
  }
  runtime::ScatterPlan& p = sc.plan;
  p.type = t;
  const hlo::HloComputation& f =
      *inst->attributes().Get<hlo::HloComputation*>(hlo::AttrKey::kToApply);
  const HloInstruction* root = f.root();
  if (f.num_parameters() == 2 && root->opcode() == HloOpcode::kParameter &&
      root->parameter_number() == 1) {
    p.replace = true;
  } else if (const std::optional<runtime::FoldOp> op = FoldOpOf(f)) {
    p.op = *op;
  } else {
    return std::nullopt;
  }
  const auto& a = inst->attributes();
  auto list = [&](hlo::AttrKey key) {
    return a.GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
  };
  const std::vector<int64_t> window_dims = list(hlo::AttrKey::kUpdateWindowDims);
  const std::vector<int64_t> inserted = list(hlo::AttrKey::kInsertedWindowDims);
  const std::vector<int64_t> to_operand = list(hlo::AttrKey::kScatterDimsToOperandDims);
  const std::vector<int64_t> input_batching = list(hlo::AttrKey::kInputBatchingDims);
  const std::vector<int64_t> indices_batching = list(hlo::AttrKey::kScatterIndicesBatchingDims);
  const int64_t ivd = a.Get<int64_t>(hlo::AttrKey::kIndexVectorDim);
  if (to_operand.size() > kMax || input_batching.size() != indices_batching.size() ||
      input_batching.size() > kMax || ivd < 0 || ivd > is.rank()) {
    return std::nullopt;
  }
  const int64_t vector = ivd < is.rank() ? is.dimensions()[static_cast<size_t>(ivd)] : 1;
  if (vector != static_cast<int64_t>(to_operand.size())) return std::nullopt;
  p.index_type = is.element_type();
  p.operand_rank = static_cast<int>(os.rank());
  p.update_rank = static_cast<int>(us.rank());
  p.index_rank = static_cast<int>(is.rank());
  p.index_vector_dim = static_cast<int>(ivd);
  p.index_count = static_cast<int>(to_operand.size());
  const std::vector<int64_t> ost = PhysicalStrides(os), outst = PhysicalStrides(sc.out.shape),
                             ist = PhysicalStrides(is), ust = PhysicalStrides(us);
  for (size_t d = 0; d < static_cast<size_t>(os.rank()); ++d) {
    p.operand_size[d] = os.dimensions()[d];
    p.operand_stride[d] = ost[d];
    p.out_stride[d] = outst[d];
  }
  for (size_t d = 0; d < static_cast<size_t>(is.rank()); ++d) {
    p.index_size[d] = is.dimensions()[d];
    p.index_stride[d] = ist[d];
  }
  for (size_t k = 0; k < to_operand.size(); ++k) p.to_operand[k] = static_cast<int>(to_operand[k]);
  p.batching = static_cast<int>(input_batching.size());
  for (size_t k = 0; k < input_batching.size(); ++k) {
    p.operand_batching[k] = static_cast<int>(input_batching[k]);
    p.indices_batching[k] = static_cast<int>(indices_batching[k]);
  }
  std::vector<int> kept, batch;
  for (int d = 0; d < p.operand_rank; ++d) {
    const bool gone =
        std::find(inserted.begin(), inserted.end(), d) != inserted.end() ||
        std::find(input_batching.begin(), input_batching.end(), d) != input_batching.end();
    if (!gone) kept.push_back(d);
  }
  for (int d = 0; d < p.index_rank; ++d) {
    if (d != p.index_vector_dim) batch.push_back(d);
  }
  size_t next_kept = 0, next_batch = 0;
  for (size_t d = 0; d < static_cast<size_t>(us.rank()); ++d) {
    p.update_size[d] = us.dimensions()[d];
    p.update_stride[d] = ust[d];
    const bool window = std::find(window_dims.begin(), window_dims.end(),
                                  static_cast<int64_t>(d)) != window_dims.end();
    if (window) {
      if (next_kept >= kept.size()) return std::nullopt;
      p.update_operand[d] = kept[next_kept++];
      p.update_index[d] = -1;
      if (p.update_size[d] > p.operand_size[static_cast<size_t>(p.update_operand[d])]) {
        return std::nullopt;
      }
    } else {
      if (next_batch >= batch.size()) return std::nullopt;
      p.update_index[d] = batch[next_batch++];
      p.update_operand[d] = -1;
      if (p.update_size[d] != p.index_size[static_cast<size_t>(p.update_index[d])]) {
        return std::nullopt;
      }
    }
  }
  if (next_kept != kept.size() || next_batch != batch.size() || !p.Invalid().empty()) {
    return std::nullopt;
  }
  return sc;
}

}  // namespace uir::codegen
