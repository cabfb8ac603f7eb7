// Verifier rules beyond shape inference: attributes each opcode needs, ops
// whose result shape is written out (rng, bitcast, collectives, scan, ...),
// replica groups, and the limits on nesting that keep every recursive walk
// bounded.
#include "hlo/verifier_ops.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "hlo/computation.h"
#include "hlo/replica_groups.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

[[noreturn]] void Fail(const HloInstruction& inst, const std::string& message) {
  throw VerifyError(inst.name(), message);
}

// The attributes without which an opcode has no meaning (shape inference
// checks most others where it reads them).
const std::vector<AttrKey>& RequiredAttributes(HloOpcode op) {
  using K = AttrKey;
  static const std::unordered_map<HloOpcode, std::vector<AttrKey>> kRequired = {
      {HloOpcode::kReducePrecision, {K::kExponentBits, K::kMantissaBits}},
      {HloOpcode::kCompare, {K::kDirection}},
      {HloOpcode::kSort, {K::kDimensions, K::kToApply}},
      {HloOpcode::kRng, {K::kDistribution}},
      {HloOpcode::kBatchNormTraining, {K::kEpsilon, K::kFeatureIndex}},
      {HloOpcode::kBatchNormInference, {K::kEpsilon, K::kFeatureIndex}},
      {HloOpcode::kBatchNormGrad, {K::kEpsilon, K::kFeatureIndex}},
      {HloOpcode::kIota, {K::kIotaDimension}},
      {HloOpcode::kGetTupleElement, {K::kIndex}},
      {HloOpcode::kConvolution, {K::kDimLabels}},
      {HloOpcode::kFft, {K::kFftType, K::kFftLength}},
      {HloOpcode::kTopK, {K::kK}},
      {HloOpcode::kAllGather, {K::kDimensions}},
      {HloOpcode::kAllGatherStart, {K::kDimensions}},
      {HloOpcode::kReduceScatter, {K::kDimensions}},
      {HloOpcode::kCustomCall, {K::kCustomCallTarget}},
      {HloOpcode::kScan, {K::kDimensions, K::kNumCarries, K::kToApply}},
      {HloOpcode::kGetDimensionSize, {K::kDimensions}},
      {HloOpcode::kSetDimensionSize, {K::kDimensions}},
      {HloOpcode::kRngGetAndUpdateState, {K::kDelta}},
  };
  static const std::vector<AttrKey> kNone;
  auto it = kRequired.find(op);
  return it == kRequired.end() ? kNone : it->second;
}

int64_t ShapeDepth(const Shape& s, int64_t limit) {
  if (!s.IsTuple() && !s.IsBuffer()) return 0;
  int64_t deepest = 0;
  for (const Shape& e : s.tuple_shapes()) {
    deepest = std::max(deepest, ShapeDepth(e, limit));
    if (deepest > limit) break;
  }
  return deepest + 1;
}

// Element count times bits of every array in `s` fit in int64.
bool SizeFits(const Shape& s) {
  if (s.IsTuple() || s.IsBuffer()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (!SizeFits(e)) return false;
    }
    return true;
  }
  int64_t n = 8;  // bits, so sub-byte types and byte counts both fit
  for (int64_t d : s.dimensions()) {
    if (d < 0) return true;  // unbounded dynamic: no size
    if (__builtin_mul_overflow(n, d, &n)) return false;
  }
  return true;
}

int64_t TotalBits(const Shape& s) {
  int64_t n = BitWidth(s.element_type());
  for (int64_t d : s.dimensions()) n *= d;
  return n;
}

std::string Name(HloOpcode op) { return std::string(OpcodeName(op)); }

void CheckCollective(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  const AttributeMap& a = inst.attributes();
  const bool uniform = op == HloOpcode::kAllGather || op == HloOpcode::kAllGatherStart ||
                       op == HloOpcode::kReduceScatter || op == HloOpcode::kAllToAll;
  std::vector<std::vector<int64_t>> groups;
  if (auto rg = a.GetOr<ReplicaGroups>(AttrKey::kReplicaGroups)) {
    try {
      groups = CheckReplicaGroups(*rg, uniform);
    } catch (const ShapeError& e) {
      Fail(inst, e.what());
    }
  }
  // The group size when the groups are written; 0 when everyone takes part
  // (known only when the module runs).
  const int64_t group_size = groups.empty() || groups[0].empty() ? 0 : groups[0].size();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (op != HloOpcode::kCollectivePermute && op != HloOpcode::kCollectivePermuteStart &&
        !operand(i).IsArray())
      Fail(inst, Name(op) + " takes arrays");
  }
  if (inst.operand_count() == 0 && op != HloOpcode::kCollectiveBroadcast)
    Fail(inst, Name(op) + " needs an operand");
  switch (op) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter: {
      const auto& dims = a.Get<std::vector<int64_t>>(AttrKey::kDimensions);
      if (dims.size() != 1) Fail(inst, Name(op) + " needs dimensions={d}");
      const int64_t d = dims[0];
      std::vector<const Shape*> results;
      const Shape& s = op == HloOpcode::kAllGatherStart && inst.shape().IsTuple() &&
                               inst.shape().tuple_shapes_size() == 2
                           ? inst.shape().tuple_shapes(1)
                           : inst.shape();
      if (s.IsTuple()) {
        for (const Shape& e : s.tuple_shapes()) results.push_back(&e);
      } else {
        results.push_back(&s);
      }
      if (static_cast<int64_t>(results.size()) != inst.operand_count())
        Fail(inst, Name(op) + " needs one result per operand");
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        const Shape& in = operand(i);
        const Shape& out = *results[i];
        if (!out.IsArray() || out.rank() != in.rank() || out.element_type() != in.element_type())
          Fail(inst, "result " + std::to_string(i) + " must have its operand's rank and type");
        if (d < 0 || d >= in.rank())
          Fail(inst, "dimension " + std::to_string(d) + " is out of range for " + in.Describe());
        for (int64_t k = 0; k < in.rank(); ++k) {
          if (k != d && in.dimensions(k) != out.dimensions(k))
            Fail(inst, "operand and result differ outside dimension " + std::to_string(d));
        }
        const bool gather = op != HloOpcode::kReduceScatter;
        const int64_t small = gather ? in.dimensions(d) : out.dimensions(d);
        const int64_t big = gather ? out.dimensions(d) : in.dimensions(d);
        if (small == 0 ? big != 0 : big % small != 0)
          Fail(inst, "dimension " + std::to_string(d) + " must scale by the group size");
        if (group_size > 0 && small > 0 && big / small != group_size)
          Fail(inst, "dimension " + std::to_string(d) + " must scale by the group size " +
                         std::to_string(group_size));
      }
      break;
    }
    case HloOpcode::kAllToAll:
      if (auto split = a.GetOr<int64_t>(AttrKey::kSplitDimension)) {
        if (inst.operand_count() != 1)
          Fail(inst, "all-to-all with split_dimension takes one operand");
        if (*split < 0 || *split >= operand(0).rank())
          Fail(inst, "split_dimension " + std::to_string(*split) + " is out of range");
        if (!inst.shape().Compatible(operand(0)))
          Fail(inst, "all-to-all's result must have its operand's shape");
        if (group_size > 0 && operand(0).dimensions(*split) % group_size != 0)
          Fail(inst, "split_dimension's size must divide by the group size");
      } else {
        if (!inst.shape().IsTuple() && inst.operand_count() != 1)
          Fail(inst, "all-to-all of several operands returns a tuple");
        for (int64_t i = 1; i < inst.operand_count(); ++i) {
          if (!operand(i).Compatible(operand(0)))
            Fail(inst, "all-to-all's operands must all have one shape");
        }
        if (group_size > 0 && inst.operand_count() != group_size && inst.operand_count() > 1)
          Fail(inst, "all-to-all needs one operand per group member");
      }
      break;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      auto pairs = a.GetOr<std::vector<std::vector<int64_t>>>(AttrKey::kSourceTargetPairs);
      if (!pairs) break;
      std::vector<int64_t> sources, targets;
      for (const auto& p : *pairs) {
        if (p.size() != 2 || p[0] < 0 || p[1] < 0)
          Fail(inst, "source_target_pairs must be pairs of non-negative ids");
        if (std::count(sources.begin(), sources.end(), p[0]) ||
            std::count(targets.begin(), targets.end(), p[1]))
          Fail(inst, "a source or target appears twice in source_target_pairs");
        sources.push_back(p[0]);
        targets.push_back(p[1]);
      }
      if (!operand(0).IsArray()) Fail(inst, "collective-permute takes an array");
      break;
    }
    default:
      break;
  }
}

// The element shapes of a tuple, or the shape itself.
std::vector<Shape> Elements(const Shape& s) {
  if (!s.IsTuple()) return {s};
  return s.tuple_shapes();
}

// scan(inputs..., inits...): to_apply(input slices..., carries...) returns
// (outputs..., carries...); the result is (stacked outputs..., carries...),
// a single array when there is one of them (XLA's HloScanInstruction).
void CheckScan(const HloInstruction& inst) {
  const AttributeMap& a = inst.attributes();
  const auto& dims = a.Get<std::vector<int64_t>>(AttrKey::kDimensions);
  const int64_t carries = a.Get<int64_t>(AttrKey::kNumCarries);
  const HloComputation& f = *a.Get<HloComputation*>(AttrKey::kToApply);
  const int64_t n = inst.operand_count();
  const std::vector<Shape> results = Elements(inst.shape());
  const std::vector<Shape> roots = Elements(f.root()->shape());
  const int64_t result_count = static_cast<int64_t>(results.size());
  if (dims.size() != 1) Fail(inst, "scan needs dimensions={d}");
  const int64_t d = dims[0];
  if (carries < 0 || carries > n) Fail(inst, "num_carries is out of range");
  if (carries > result_count) Fail(inst, "scan has fewer results than carries");
  if (n == carries && result_count == carries) Fail(inst, "scan has no inputs and no outputs");
  if (f.num_parameters() != n) Fail(inst, "to_apply must take one parameter per operand");
  if (static_cast<int64_t>(roots.size()) != result_count)
    Fail(inst, "to_apply must return one value per result of the scan");
  const int64_t inputs = n - carries, outputs = result_count - carries;
  auto scanned = [&](const Shape& s, const std::string& what) {
    if (!s.IsArray() || d < 0 || d >= s.rank())
      Fail(inst, "scan dimension " + std::to_string(d) + " is out of range for " + what);
    return s.dimensions(d);
  };
  const int64_t length =
      inputs > 0 ? scanned(inst.operand(0)->shape(), "input 0") : scanned(results[0], "result 0");
  auto slice = [&](const Shape& s, const std::string& what) {
    if (scanned(s, what) != length)
      Fail(inst, what + " differs in the length of the scan dimension");
    std::vector<int64_t> sliced = s.dimensions();
    sliced.erase(sliced.begin() + d);
    return Shape(s.element_type(), sliced);
  };
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    const Shape want = i < inputs ? slice(s, "input " + std::to_string(i)) : s;
    if (!f.parameter(i)->shape().Compatible(want))
      Fail(inst, "to_apply's parameter " + std::to_string(i) + " must be " + want.Describe());
  }
  for (int64_t j = 0; j < carries; ++j) {
    if (!roots[outputs + j].Compatible(f.parameter(inputs + j)->shape()))
      Fail(inst, "carry " + std::to_string(j) + " must keep its init's shape through to_apply");
  }
  for (int64_t j = 0; j < result_count; ++j) {
    const std::string what = "result " + std::to_string(j);
    const Shape want = j < outputs ? slice(results[j], what) : results[j];
    if (!roots[j].Compatible(want))
      Fail(inst, what + " must be to_apply's " + roots[j].Describe() +
                     (j < outputs ? " stacked along the scan dimension" : ""));
  }
}

void CheckExplicitResult(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  switch (inst.opcode()) {
    case HloOpcode::kReducePrecision: {
      const int64_t e = inst.attributes().Get<int64_t>(AttrKey::kExponentBits);
      const int64_t m = inst.attributes().Get<int64_t>(AttrKey::kMantissaBits);
      if (e < 1 || m < 0) Fail(inst, "exponent_bits must be >= 1 and mantissa_bits >= 0");
      if (!IsFloat(s.element_type())) Fail(inst, "reduce-precision needs a floating-point operand");
      break;
    }
    case HloOpcode::kBitcast:
      if (!s.IsArray() || !operand(0).IsArray() || TotalBits(s) != TotalBits(operand(0)))
        Fail(inst, "bitcast from " + operand(0).Describe() + " to " + s.Describe() +
                       " must keep the size in bytes");
      break;
    case HloOpcode::kRng:
      if (!s.IsArray() || s.element_type() != operand(0).element_type())
        Fail(inst, "rng's result must have the element type of its parameters");
      break;
    case HloOpcode::kRngBitGenerator:
      if (!s.IsTuple() || s.tuple_shapes_size() != 2 || !s.tuple_shapes(0).Compatible(operand(0)) ||
          !s.tuple_shapes(1).IsArray() || !IsInteger(s.tuple_shapes(1).element_type()))
        Fail(inst,
             "rng-bit-generator's shape must be (state, integer bits), with the state's shape " +
                 operand(0).Describe());
      break;
    case HloOpcode::kStochasticConvert:
      if (!s.IsArray() || s.dimensions() != operand(0).dimensions() ||
          !IsInteger(s.element_type()) || IsUnsigned(s.element_type()))
        Fail(inst, "stochastic-convert gives signed integers of the operand's dimensions");
      break;
    case HloOpcode::kIota:
      if (!s.IsArray() || s.element_type() == PrimitiveType::kPred)
        Fail(inst, "iota needs a numeric array shape");
      break;
    case HloOpcode::kDynamicReshape:
      if (inst.operand_count() < 1 || !operand(0).IsArray() || !s.IsArray() ||
          inst.operand_count() != s.rank() + 1 || s.element_type() != operand(0).element_type())
        Fail(inst, "dynamic-reshape takes the operand and one size per result dimension");
      for (int64_t i = 1; i < inst.operand_count(); ++i) {
        if (!operand(i).IsArray() || operand(i).rank() != 0 ||
            operand(i).element_type() != PrimitiveType::kS32)
          Fail(inst, "dynamic-reshape's sizes must be s32[] scalars");
      }
      break;
    case HloOpcode::kScan:
      CheckScan(inst);
      break;
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast:
      CheckCollective(inst);
      break;
    default:
      break;
  }
}

}  // namespace

void CheckShapeLimits(const HloInstruction& inst) {
  if (ShapeDepth(inst.shape(), kMaxShapeDepth) > kMaxShapeDepth)
    Fail(inst, "tuple shapes nest deeper than " + std::to_string(kMaxShapeDepth) + " levels");
  if (!SizeFits(inst.shape())) Fail(inst, "shape " + inst.shape().Describe() + " is too large");
}

void CheckRequiredAttributes(const HloInstruction& inst) {
  for (AttrKey k : RequiredAttributes(inst.opcode())) {
    if (!inst.attributes().Has(k))
      Fail(inst, Name(inst.opcode()) + " needs " + std::string(AttrName(k)) + "=");
  }
}

void CheckOpcodeRules(const HloInstruction& inst) { CheckExplicitResult(inst); }

void CheckCallDepth(const HloModule& module) {
  // Longest chain of calls below each computation, found without recursion.
  std::unordered_map<const HloComputation*, int64_t> depth;
  for (const auto& root : module.computations()) {
    std::vector<std::pair<const HloComputation*, bool>> stack = {{root.get(), false}};
    while (!stack.empty()) {
      auto [c, expanded] = stack.back();
      stack.pop_back();
      if (depth.count(c)) continue;
      std::vector<const HloComputation*> callees;
      for (const auto& inst : c->instructions()) {
        for (const HloComputation* callee : inst->called_computations()) callees.push_back(callee);
      }
      if (!expanded) {
        stack.emplace_back(c, true);
        for (const HloComputation* callee : callees) {
          if (!depth.count(callee)) stack.emplace_back(callee, false);
        }
        continue;
      }
      int64_t d = 0;  // calls below c
      for (const HloComputation* callee : callees) {
        auto it = depth.find(callee);
        d = std::max(d, (it == depth.end() ? 0 : it->second) + 1);
      }
      depth[c] = d;
      if (d > kMaxCallDepth) {
        throw VerifyError(c->name(), "computations call each other " + std::to_string(d) +
                                         " levels deep; the limit is " +
                                         std::to_string(kMaxCallDepth));
      }
    }
  }
}

}  // namespace uir::hlo
