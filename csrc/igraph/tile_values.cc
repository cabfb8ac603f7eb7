// The tile-program builder, op by op: each HLO instruction's tile value
// from its operands' at the index map its reader needs.
#include "eval/context.h"
#include "igraph/iop.h"
#include "igraph/tile_builder.h"

namespace uir::igraph::detail {

bool Builder::IsElementwise(const HloInstruction& inst) {
  // A copy reads its operand element by element too.
  return hlo::IsElementwise(inst.opcode()) || inst.opcode() == HloOpcode::kCopy;
}

int Builder::Value(const HloInstruction* inst, const IndexMap& map, bool reduced) {
  std::vector<int64_t> key;
  for (const Linear& l : map) {
    key.insert(key.end(), l.coefficient.begin(), l.coefficient.end());
    key.push_back(l.constant);
  }
  auto memo_key = std::make_tuple(inst, key, reduced);
  auto it = memo_.find(memo_key);
  if (it != memo_.end()) return it->second;
  // Values are built operand first, one stack frame per level: a chain
  // deeper than this would risk the thread's stack, so it stays on the
  // evaluator instead (with this reason).
  if (depth_ >= kMaxDepth) {
    Fail("a chain of more than " + std::to_string(kMaxDepth) + " ops ending at %" + inst->name());
  }
  ++depth_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{depth_};
  const int v = Compute(inst, map, reduced);
  memo_[memo_key] = v;
  return v;
}

int Builder::Compute(const HloInstruction* inst, const IndexMap& map, bool reduced) {
  const Shape& shape = inst->shape();
  const size_t n = Dims();
  if (!shape.IsArray()) Fail("%" + inst->name() + " is not an array");
  if (hlo::IsComplex(shape.element_type())) Fail("complex values (%" + inst->name() + ")");
  TileOp op;
  op.reduced = reduced;
  op.dtype = shape.element_type();
  op.source = inst->name();
  int64_t leaf;
  if (IsLeaf(inst, &leaf)) {
    op.kind = TileOp::Kind::kLoad;
    op.tensor = static_cast<int>(leaf);
    op.access = Combine(map, PhysicalStrides(shape), n);
    return Push(std::move(op));
  }
  if (!reduced && IsReduced(inst)) {
    // A reduced value read by full rows without a broadcast (a reshape
    // that restores a size-1 reduced dim): fine if its index does not
    // move along the reduced dims; it is then broadcast along them.
    for (const Linear& l : map) {
      for (size_t d = 0; d < n; ++d) {
        if (p_.reduced_dim[d] && l.coefficient[d] != 0) {
          Fail("%" + inst->name() + " mixes a reduced value into full rows without a broadcast");
        }
      }
    }
    op.kind = TileOp::Kind::kBroadcast;
    op.operands = {Value(inst, map, true)};
    return Push(std::move(op));
  }
  const HloOpcode code = inst->opcode();
  const auto& a = inst->attributes();
  auto operand_map_same = [&](int64_t i) {
    return inst->operand(i)->shape().rank() == 0 ? IndexMap{} : map;
  };
  switch (code) {
    case HloOpcode::kConstant: {
      const hlo::Literal& lit = inst->literal();
      if (shape.element_count() == 1) {
        op.kind = TileOp::Kind::kFill;
        op.literal = hlo::Literal(Shape(shape.element_type(), {}));
        op.literal.mutable_bytes() = std::vector<uint8_t>(lit.bytes().begin(), lit.bytes().end());
        return Push(std::move(op));
      }
      TileTensor t;
      t.kind = TileTensor::Kind::kConstant;
      t.index = constants_++;
      t.name = inst->name();
      t.dtype = shape.element_type();
      t.elements = shape.element_count();
      t.literal = lit;
      p_.tensors.push_back(std::move(t));
      op.kind = TileOp::Kind::kLoad;
      op.tensor = static_cast<int>(p_.tensors.size()) - 1;
      op.access = Combine(map, RowMajorStrides(shape.dimensions()), n);
      return Push(std::move(op));
    }
    case HloOpcode::kIota: {
      op.kind = TileOp::Kind::kIota;
      op.access = map.at(static_cast<size_t>(a.Get<int64_t>(hlo::AttrKey::kIotaDimension)));
      return Push(std::move(op));
    }
    case HloOpcode::kCopy:
      return Value(inst->operand(0), map, reduced);
    case HloOpcode::kBroadcast: {
      const auto dims = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
      const HloInstruction* o = inst->operand(0);
      IndexMap om;
      for (size_t k = 0; k < dims.size(); ++k) {
        // A size-1 operand dim spread over a larger one always reads index 0.
        const bool degenerate =
            o->shape().dimensions(static_cast<int64_t>(k)) == 1 && shape.dimensions(dims[k]) != 1;
        om.push_back(degenerate ? Zero(n) : map[dims[k]]);
      }
      if (!reduced && IsReduced(o)) {
        for (const Linear& l : om) {
          for (size_t d = 0; d < n; ++d) {
            if (p_.reduced_dim[d] && l.coefficient[d] != 0) {
              Fail("%" + inst->name() + " broadcasts a reduced value other than along its rows");
            }
          }
        }
        op.kind = TileOp::Kind::kBroadcast;
        op.operands = {Value(o, om, true)};
        return Push(std::move(op));
      }
      return Value(o, om, reduced);
    }
    case HloOpcode::kTranspose: {
      const auto perm = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
      IndexMap om(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) om[perm[k]] = map[k];
      return Value(inst->operand(0), om, reduced);
    }
    case HloOpcode::kSlice: {
      const auto& ranges = a.Get<std::vector<hlo::SliceRange>>(hlo::AttrKey::kSlice);
      IndexMap om(map.size());
      for (size_t k = 0; k < map.size(); ++k) {
        om[k] = Combine({map[k]}, {ranges[k].stride}, n);
        om[k].constant += ranges[k].start;
      }
      return Value(inst->operand(0), om, reduced);
    }
    case HloOpcode::kReverse: {
      const auto dims = a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
      IndexMap om = map;
      for (int64_t d : dims) {
        om[d] = Combine({map[d]}, {-1}, n);
        om[d].constant += shape.dimensions(d) - 1;
      }
      return Value(inst->operand(0), om, reduced);
    }
    case HloOpcode::kBitcast:
    case HloOpcode::kReshape: {
      const HloInstruction* o = inst->operand(0);
      const bool physical = code == HloOpcode::kBitcast;
      Linear l =
          Combine(map, physical ? PhysicalStrides(shape) : RowMajorStrides(shape.dimensions()), n);
      int64_t o_leaf;
      if (IsLeaf(o, &o_leaf) && (physical || IsRowMajor(o->shape()))) {
        op.kind = TileOp::Kind::kLoad;
        op.tensor = static_cast<int>(o_leaf);
        op.access = l;
        return Push(std::move(op));
      }
      std::optional<IndexMap> om = UnravelInto(l, o->shape(), physical);
      if (!om) {
        // Not linear in this iteration space: the operand is computed in
        // its own, into scratch memory, and read back linearly.
        if (IsLeaf(o, &o_leaf) || computation_ == nullptr) {
          Fail("%" + inst->name() + " reshapes with an index pattern that is not linear");
        }
        throw MaterializeRequest{o};
      }
      // The tile holds the same elements under the new shape.
      op.kind = TileOp::Kind::kIdentity;
      op.operands = {Value(o, *om, reduced)};
      return Push(std::move(op));
    }
    case HloOpcode::kConcatenate: {
      const size_t k =
          static_cast<size_t>(a.Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions).at(0));
      std::vector<int64_t> bounds;
      int64_t at = 0;
      for (const HloInstruction* o : inst->operands()) {
        at += o->shape().dimensions(static_cast<int64_t>(k));
        bounds.push_back(at);
      }
      bounds.pop_back();
      const size_t piece = Piece(inst, map[k], bounds);
      IndexMap om = map;
      om[k].constant -= piece == 0 ? 0 : bounds[piece - 1];
      return Value(inst->operand(static_cast<int64_t>(piece)), om, reduced);
    }
    case HloOpcode::kPad: {
      const auto& config = a.Get<hlo::PaddingConfig>(hlo::AttrKey::kPadding);
      const Shape& in = inst->operand(0)->shape();
      IndexMap om = map;
      bool padding = false;
      for (size_t k = 0; k < map.size(); ++k) {
        if (config[k].interior != 0) {
          if (computation_ == nullptr) Fail("interior padding (%" + inst->name() + ")");
          throw MaterializeRequest{inst};
        }
        const int64_t start = config[k].low,
                      end = config[k].low + in.dimensions(static_cast<int64_t>(k));
        const size_t piece = Piece(inst, map[k], {start, end});
        if (piece != 1) padding = true;
        om[k].constant -= start;
      }
      if (padding) return Value(inst->operand(1), {}, reduced);
      return Value(inst->operand(0), om, reduced);
    }
    case HloOpcode::kReduce:
      return Reduce(inst, map, std::move(op));
    default:
      break;
  }
  if (code == HloOpcode::kBitcastConvert) {
    // Same-width reinterpretation is elementwise; a change of width adds
    // or removes a minor dimension and stays on the evaluator.
    const hlo::PrimitiveType from = inst->operand(0)->shape().element_type();
    if (!hlo::IsRegisterBitcast(from, shape.element_type())) {
      Fail("bitcast-convert from " + std::string(hlo::PrimitiveTypeName(from)) + " to " +
           std::string(hlo::PrimitiveTypeName(shape.element_type())) + " (%" + inst->name() + ")");
    }
    op.kind = TileOp::Kind::kElementwise;
    op.opcode = code;
    op.operands = {Value(inst->operand(0), map, reduced)};
    return Push(std::move(op));
  }
  if (!IsElementwise(*inst)) Fail(std::string(hlo::OpcodeName(code)) + " (%" + inst->name() + ")");
  op.kind = TileOp::Kind::kElementwise;
  op.opcode = code;
  if (code == HloOpcode::kCompare) {
    const auto type = a.GetEnumOr<hlo::ComparisonType>(hlo::AttrKey::kCompareType);
    static const char* kNames[] = {"eq", "ne", "ge", "gt", "le", "lt"};
    op.direction =
        kNames[static_cast<int>(a.GetEnum<hlo::ComparisonDirection>(hlo::AttrKey::kDirection))];
    if (type == hlo::ComparisonType::kTotalOrder &&
        hlo::IsFloat(inst->operand(0)->shape().element_type())) {
      op.direction += "_total";
    }
  } else if (code != HloOpcode::kConvert && code != HloOpcode::kSelect &&
             code != HloOpcode::kClamp && code != HloOpcode::kIsFinite) {
    const hlo::OpcodeCategory c = hlo::OpcodeCategoryOf(code);
    FunctionClass cls =
        c == hlo::OpcodeCategory::kUnary ? FunctionClass::kUnary : FunctionClass::kBinary;
    if (FunctionName(cls, code).empty())
      Fail(std::string(hlo::OpcodeName(code)) + " (%" + inst->name() + ")");
  }
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    op.operands.push_back(Value(inst->operand(i), operand_map_same(i), reduced));
  }
  return Push(std::move(op));
}

int Builder::Reduce(const HloInstruction* inst, const IndexMap& map, TileOp op) {
  const HloComputation* f = inst->attributes().Get<HloComputation*>(hlo::AttrKey::kToApply);
  std::optional<HloOpcode> reducer = eval::SimpleReducer(*f);
  if (!reducer) Fail("reducer %" + f->name() + " is not add, mul, max, min, and or or");
  const HloInstruction* o = inst->operand(0);
  if (o->shape().dimensions() != full_) Fail("reductions of different shapes");
  IndexMap om(Dims());
  size_t kept = 0;
  for (size_t d = 0; d < Dims(); ++d) {
    if (p_.reduced_dim[d]) {
      om[d] = Zero(Dims());
      om[d].coefficient[d] = p_.extents[d] > 1 ? 1 : 0;
    } else {
      om[d] = map.at(kept++);
    }
  }
  op.kind = TileOp::Kind::kReduce;
  op.reduced = true;
  op.opcode = *reducer;
  op.operands = {Value(o, om, false), Value(inst->operand(1), {}, true)};
  return Push(std::move(op));
}

}  // namespace uir::igraph::detail
