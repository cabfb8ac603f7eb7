// The evaluator's dynamic dimensions (<=N): an array is kept at its actual
// size, as an XLA literal with dynamic sizes reads, and an op reading one
// runs at the actual sizes where its shape rule admits them.
#include "eval/dynamic.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "eval/typed.h"
#include "hlo/shape_inference.h"
#include "support/error.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;
using hlo::Shape;

// The shape `inst` produces from operands of their actual sizes, or
// nullopt where no rule gives one. Throws ShapeError when the sizes do
// not fit together (say, an add of dynamic sizes 3 and 5).
std::optional<Shape> ActualResultShape(const HloInstruction& inst,
                                       const std::vector<const Literal*>& ops) {
  const HloOpcode op = inst.opcode();
  const Shape& declared = inst.shape();
  auto like_declared = [&](std::vector<int64_t> dims) {
    Shape out(declared.element_type(), std::move(dims));
    for (int64_t i = 0; i < declared.rank(); ++i)
      out.set_dynamic_dimension(i, declared.is_dynamic_dimension(i));
    return out;
  };
  switch (op) {
    case HloOpcode::kBroadcast: {
      std::vector<int64_t> dims = declared.dimensions();
      const auto& map = inst.attributes().Get<std::vector<int64_t>>(AttrKey::kDimensions);
      for (size_t j = 0; j < map.size(); ++j) dims.at(map[j]) = ops[0]->shape().dimensions(j);
      return like_declared(dims);
    }
    case HloOpcode::kReshape: {
      // The one dynamic dimension takes the elements the others leave.
      std::vector<int64_t> dims = declared.dimensions();
      int64_t dynamic = -1, rest = 1;
      for (int64_t i = 0; i < declared.rank(); ++i) {
        if (!declared.is_dynamic_dimension(i)) {
          rest *= dims[i];
        } else if (dynamic >= 0) {
          return std::nullopt;
        } else {
          dynamic = i;
        }
      }
      const int64_t count = ops[0]->element_count();
      if (dynamic < 0 || rest == 0 || count % rest != 0) return std::nullopt;
      dims[dynamic] = count / rest;
      return like_declared(dims);
    }
    case HloOpcode::kConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kStochasticConvert:
      return like_declared(ops[0]->shape().dimensions());
    case HloOpcode::kBitcastConvert:
      if (declared.rank() != ops[0]->shape().rank()) return std::nullopt;
      return like_declared(ops[0]->shape().dimensions());
    default:
      break;
  }
  std::vector<const Shape*> shapes;
  for (const Literal* o : ops) shapes.push_back(&o->shape());
  return hlo::InferShape(op, shapes, inst.attributes());
}

// Ops never run at actual sizes: collectives meet the other participants at
// the declared shape, and custom calls are written against it.
bool NoActualSizes(HloOpcode op) {
  switch (op) {
    case HloOpcode::kCustomCall:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

// A dot's contracting pairs at the longer of their two sizes, the shorter
// side padded with zeros.
void AlignContracting(const HloInstruction& inst, std::vector<const Literal*>& ops,
                      std::vector<Literal>& storage) {
  const auto& a = inst.attributes();
  const auto lc =
      a.GetOr<std::vector<int64_t>>(AttrKey::kLhsContractingDims).value_or(std::vector<int64_t>{});
  const auto rc =
      a.GetOr<std::vector<int64_t>>(AttrKey::kRhsContractingDims).value_or(std::vector<int64_t>{});
  std::vector<int64_t> l = ops[0]->shape().dimensions(), r = ops[1]->shape().dimensions();
  for (size_t i = 0; i < lc.size() && i < rc.size(); ++i) {
    const int64_t size = std::max(l.at(lc[i]), r.at(rc[i]));
    l[lc[i]] = r[rc[i]] = size;
  }
  storage.reserve(2);
  if (l != ops[0]->shape().dimensions()) {
    storage.push_back(Resized(*ops[0], l));
    ops[0] = &storage.back();
  }
  if (r != ops[1]->shape().dimensions()) {
    storage.push_back(Resized(*ops[1], r));
    ops[1] = &storage.back();
  }
}

bool HasDynamicDimension(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes())
      if (HasDynamicDimension(e)) return true;
    return false;
  }
  if (!s.IsArray()) return false;
  for (int64_t i = 0; i < s.rank(); ++i)
    if (s.is_dynamic_dimension(i)) return true;
  return false;
}

}  // namespace

// Whether an operand array is smaller than its declared shape: a dynamic
// dimension below its bound (the evaluator keeps such arrays at their
// actual size, as an XLA literal with dynamic sizes reads).
bool HasShortOperand(const HloInstruction& inst, const std::vector<const Literal*>& ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const Shape& declared = inst.operand(static_cast<int64_t>(i))->shape();
    if (declared.IsArray() && ops[i]->shape().IsArray() &&
        ops[i]->shape().dimensions() != declared.dimensions())
      return true;
  }
  return false;
}

Literal EvalDynamic(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                    const OpEvaluator& eval) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kGetDimensionSize || op == HloOpcode::kSetDimensionSize ||
      op == HloOpcode::kDynamicReshape)
    return eval(inst, ops);  // these read the actual sizes themselves
  // A dot pads the shorter side of each contracting pair with zeros, as
  // the dynamic padder masks contracting dimensions.
  std::vector<Literal> aligned;
  std::vector<const Literal*> use = ops;
  if (op == HloOpcode::kDot) AlignContracting(inst, use, aligned);
  std::optional<Shape> actual;
  std::string misfit;
  if (!NoActualSizes(op)) {
    try {
      actual = ActualResultShape(inst, use);
    } catch (const ShapeError& e) {
      misfit = e.what();
    }
  }
  if (actual && FitsShape(*actual, inst.shape())) {
    // The same op over operands and a result of the actual sizes.
    std::vector<std::unique_ptr<HloInstruction>> operands;
    HloInstruction resized(op, *actual, inst.name());
    resized.mutable_attributes() = inst.attributes();
    for (const Literal* o : use) {
      operands.push_back(
          std::make_unique<HloInstruction>(HloOpcode::kParameter, o->shape(), "operand"));
      resized.AppendOperand(operands.back().get());
    }
    return eval(resized, use);
  }
  if (!HasDynamicDimension(inst.shape())) {
    std::vector<Literal> padded;
    padded.reserve(ops.size());
    std::vector<const Literal*> at_bounds;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Shape& declared = inst.operand(static_cast<int64_t>(i))->shape();
      if (declared.IsArray() && ops[i]->shape().dimensions() != declared.dimensions()) {
        padded.push_back(Resized(*ops[i], declared.dimensions()));
        at_bounds.push_back(&padded.back());
      } else {
        at_bounds.push_back(ops[i]);
      }
    }
    return eval(inst, at_bounds);
  }
  if (!misfit.empty())
    throw ShapeError("the dynamic sizes of %" + inst.name() + "'s operands disagree: " + misfit);
  throw UnimplementedError("the evaluator does not carry dynamic sizes through " +
                           std::string(hlo::OpcodeName(op)) + " (%" + inst.name() + ")");
}

}  // namespace uir::eval
