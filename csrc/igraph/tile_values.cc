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
  key.push_back(part_);
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

int Builder::PartOf(const HloInstruction* inst, const IndexMap& map, bool reduced, int part) {
  const int saved = part_;
  part_ = part;
  struct Restore {
    int& part;
    int saved;
    ~Restore() { part = saved; }
  } restore{part_, saved};
  return Value(inst, map, reduced);
}

PrimitiveType Builder::PartType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

void Builder::AsParts(TileTensor& t) {
  if (!IsComplex(t.dtype)) return;
  t.dtype = PartType(t.dtype);
  t.elements *= 2;
  if (t.kind == TileTensor::Kind::kConstant) {
    // The same bytes: each element's real part, then its imaginary one.
    hlo::Literal parts(Shape(t.dtype, {t.elements}));
    parts.mutable_bytes() =
        std::vector<uint8_t>(t.literal.bytes().begin(), t.literal.bytes().end());
    t.literal = std::move(parts);
  }
}

Linear Builder::Parted(Linear l, const Shape& shape) const {
  if (!IsComplex(shape.element_type())) return l;
  for (int64_t& c : l.coefficient) c *= 2;
  l.constant = 2 * l.constant + part_;
  return l;
}

int Builder::Op(HloOpcode opcode, PrimitiveType dtype, std::vector<int> operands, bool reduced,
                const std::string& source, const std::string& direction) {
  TileOp op;
  op.kind = TileOp::Kind::kElementwise;
  op.reduced = reduced;
  op.dtype = dtype;
  op.opcode = opcode;
  op.operands = std::move(operands);
  op.source = source;
  op.direction = direction;
  return Push(std::move(op));
}

int Builder::ComplexElementwise(const HloInstruction* inst, const IndexMap& map, bool reduced) {
  const HloOpcode code = inst->opcode();
  const std::string& src = inst->name();
  const PrimitiveType out = inst->shape().element_type();
  auto operand_map = [&](int64_t i) {
    return inst->operand(i)->shape().rank() == 0 ? IndexMap{} : map;
  };
  auto part = [&](int64_t i, int p) {
    return PartOf(inst->operand(i), operand_map(i), reduced, p);
  };
  const auto complain = [&]() -> int { Fail("complex values (%" + src + ")"); };
  if (IsComplex(out)) {
    const PrimitiveType t = PartType(out);
    auto bin = [&](HloOpcode o, int x, int y) { return Op(o, t, {x, y}, reduced, src); };
    auto un = [&](HloOpcode o, int x) { return Op(o, t, {x}, reduced, src); };
    auto zero = [&] {
      TileOp fill;
      fill.kind = TileOp::Kind::kFill;
      fill.reduced = reduced;
      fill.dtype = t;
      fill.literal = hlo::Literal(Shape(t, {}));
      fill.source = src;
      return Push(std::move(fill));
    };
    const int p = part_;
    switch (code) {
      case HloOpcode::kAdd:
      case HloOpcode::kSubtract:
        return bin(code, part(0, p), part(1, p));
      case HloOpcode::kNegate:
        return un(code, part(0, p));
      case HloOpcode::kSelect:
        return Op(code, t, {part(0, -1), part(1, p), part(2, p)}, reduced, src);
      case HloOpcode::kMultiply: {
        const int ar = part(0, 0), ai = part(0, 1), br = part(1, 0), bi = part(1, 1);
        return p == 0 ? bin(HloOpcode::kSubtract, bin(HloOpcode::kMultiply, ar, br),
                            bin(HloOpcode::kMultiply, ai, bi))
                      : bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, ar, bi),
                            bin(HloOpcode::kMultiply, ai, br));
      }
      case HloOpcode::kDivide: {
        const int ar = part(0, 0), ai = part(0, 1), br = part(1, 0), bi = part(1, 1);
        const int d = bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, br, br),
                          bin(HloOpcode::kMultiply, bi, bi));
        const int num = p == 0 ? bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, ar, br),
                                     bin(HloOpcode::kMultiply, ai, bi))
                               : bin(HloOpcode::kSubtract, bin(HloOpcode::kMultiply, ai, br),
                                     bin(HloOpcode::kMultiply, ar, bi));
        return bin(HloOpcode::kDivide, num, d);
      }
      case HloOpcode::kExp: {
        const int e = un(HloOpcode::kExp, part(0, 0));
        return bin(HloOpcode::kMultiply, e,
                   un(p == 0 ? HloOpcode::kCos : HloOpcode::kSin, part(0, 1)));
      }
      case HloOpcode::kLog: {
        const int ar = part(0, 0), ai = part(0, 1);
        if (p == 1) return bin(HloOpcode::kAtan2, ai, ar);
        const int sq = bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, ar, ar),
                           bin(HloOpcode::kMultiply, ai, ai));
        return un(HloOpcode::kLog, un(HloOpcode::kSqrt, sq));
      }
      case HloOpcode::kPower: {
        // exp(b * log(a)), and 0 where a is 0 (as std::pow has it).
        const int ar = part(0, 0), ai = part(0, 1), br = part(1, 0), bi = part(1, 1);
        const int sq = bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, ar, ar),
                           bin(HloOpcode::kMultiply, ai, ai));
        const int lr = un(HloOpcode::kLog, un(HloOpcode::kSqrt, sq));
        const int li = bin(HloOpcode::kAtan2, ai, ar);
        const int mr = bin(HloOpcode::kSubtract, bin(HloOpcode::kMultiply, br, lr),
                           bin(HloOpcode::kMultiply, bi, li));
        const int mi = bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, br, li),
                           bin(HloOpcode::kMultiply, bi, lr));
        const int v = bin(HloOpcode::kMultiply, un(HloOpcode::kExp, mr),
                          un(p == 0 ? HloOpcode::kCos : HloOpcode::kSin, mi));
        const int z = zero();
        const PrimitiveType pred = PrimitiveType::kPred;
        const int at_zero = Op(HloOpcode::kAnd, pred,
                               {Op(HloOpcode::kCompare, pred, {ar, z}, reduced, src, "eq"),
                                Op(HloOpcode::kCompare, pred, {ai, z}, reduced, src, "eq")},
                               reduced, src);
        return Op(HloOpcode::kSelect, t, {at_zero, z, v}, reduced, src);
      }
      case HloOpcode::kComplex:
        return part(p, -1);
      case HloOpcode::kConvert: {
        const PrimitiveType from = inst->operand(0)->shape().element_type();
        if (IsComplex(from)) return Op(code, t, {part(0, p)}, reduced, src);
        if (p == 0) return Op(code, t, {part(0, -1)}, reduced, src);
        return zero();
      }
      default:
        return complain();
    }
  }
  // A real result read from complex operands.
  const PrimitiveType t = out;
  switch (code) {
    case HloOpcode::kReal:
      return part(0, 0);
    case HloOpcode::kImag:
      return part(0, 1);
    case HloOpcode::kAbs: {
      const int re = part(0, 0), im = part(0, 1);
      const int sq = Op(HloOpcode::kAdd, t,
                        {Op(HloOpcode::kMultiply, t, {re, re}, reduced, src),
                         Op(HloOpcode::kMultiply, t, {im, im}, reduced, src)},
                        reduced, src);
      return Op(HloOpcode::kSqrt, t, {sq}, reduced, src);
    }
    case HloOpcode::kCompare: {
      const auto dir =
          inst->attributes().GetEnum<hlo::ComparisonDirection>(hlo::AttrKey::kDirection);
      const bool eq = dir == hlo::ComparisonDirection::kEq;
      if (!eq && dir != hlo::ComparisonDirection::kNe) return complain();
      const int re = Op(code, t, {part(0, 0), part(1, 0)}, reduced, src, eq ? "eq" : "ne");
      const int im = Op(code, t, {part(0, 1), part(1, 1)}, reduced, src, eq ? "eq" : "ne");
      return Op(eq ? HloOpcode::kAnd : HloOpcode::kOr, t, {re, im}, reduced, src);
    }
    default:
      return complain();
  }
}

int Builder::Compute(const HloInstruction* inst, const IndexMap& map, bool reduced) {
  const Shape& shape = inst->shape();
  const size_t n = Dims();
  if (!shape.IsArray()) Fail("%" + inst->name() + " is not an array");
  const bool complex = IsComplex(shape.element_type());
  if (complex != (part_ >= 0)) Fail("complex values (%" + inst->name() + ")");
  TileOp op;
  op.reduced = reduced;
  op.dtype = PartType(shape.element_type());
  op.source = inst->name();
  int64_t leaf;
  if (IsLeaf(inst, &leaf)) {
    op.kind = TileOp::Kind::kLoad;
    op.tensor = static_cast<int>(leaf);
    op.access = Parted(Combine(map, PhysicalStrides(shape), n), shape);
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
        op.literal = hlo::Literal(Shape(op.dtype, {}));
        // A complex scalar's part: the half of its bytes that holds it.
        const size_t width = static_cast<size_t>(StorageBytes(op.dtype));
        const auto from =
            lit.bytes().begin() + static_cast<std::ptrdiff_t>(complex ? part_ * width : 0);
        op.literal.mutable_bytes() =
            std::vector<uint8_t>(from, from + static_cast<std::ptrdiff_t>(width));
        return Push(std::move(op));
      }
      // One tensor per constant, read by both parts of a complex one.
      int tensor = -1;
      for (size_t k = 0; k < p_.tensors.size(); ++k) {
        if (p_.tensors[k].kind == TileTensor::Kind::kConstant && p_.tensors[k].name == inst->name())
          tensor = static_cast<int>(k);
      }
      if (tensor < 0) {
        TileTensor t;
        t.kind = TileTensor::Kind::kConstant;
        t.index = constants_++;
        t.name = inst->name();
        t.dtype = shape.element_type();
        t.elements = shape.element_count();
        t.literal = lit;
        AsParts(t);
        p_.tensors.push_back(std::move(t));
        tensor = static_cast<int>(p_.tensors.size()) - 1;
      }
      op.kind = TileOp::Kind::kLoad;
      op.tensor = tensor;
      op.access = Parted(Combine(map, RowMajorStrides(shape.dimensions()), n), shape);
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
        op.access = Parted(l, shape);
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
  bool complex_operand = false;
  for (const HloInstruction* o : inst->operands()) {
    complex_operand |= o->shape().IsArray() && IsComplex(o->shape().element_type());
  }
  if ((complex || complex_operand || code == HloOpcode::kReal || code == HloOpcode::kImag) &&
      IsElementwise(*inst)) {
    if (!complex && !complex_operand) {
      // real(x) and imag(x) of a real x: x itself and zeros.
      if (code == HloOpcode::kReal) return Value(inst->operand(0), operand_map_same(0), reduced);
      op.kind = TileOp::Kind::kFill;
      op.literal = hlo::Literal(Shape(op.dtype, {}));
      return Push(std::move(op));
    }
    return ComplexElementwise(inst, map, reduced);
  }
  if (complex || complex_operand) Fail("complex values (%" + inst->name() + ")");
  if (code == HloOpcode::kBitcastConvert) {
    // Same-width reinterpretation is elementwise; a change of width adds
    // or removes a minor dimension and stays on the evaluator.
    const PrimitiveType from = inst->operand(0)->shape().element_type();
    if (!IsRegisterBitcast(from, shape.element_type())) {
      Fail("bitcast-convert from " + std::string(PrimitiveTypeName(from)) + " to " +
           std::string(PrimitiveTypeName(shape.element_type())) + " (%" + inst->name() + ")");
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
        IsFloat(inst->operand(0)->shape().element_type())) {
      op.direction += "_total";
    }
  } else if (code != HloOpcode::kConvert && code != HloOpcode::kSelect &&
             code != HloOpcode::kClamp && code != HloOpcode::kIsFinite) {
    const hlo::OpcodeCategory c = hlo::OpcodeCategoryOf(code);
    if (FnFor(c == hlo::OpcodeCategory::kUnary ? kUnaryFn : kBinaryFn, code) == Fn::kNone)
      Fail(std::string(hlo::OpcodeName(code)) + " (%" + inst->name() + ")");
  }
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    op.operands.push_back(Value(inst->operand(i), operand_map_same(i), reduced));
  }
  return Push(std::move(op));
}

int Builder::Reduce(const HloInstruction* inst, const IndexMap& map, TileOp op) {
  const HloComputation* f = inst->attributes().Get<HloComputation*>(hlo::AttrKey::kToApply);
  const std::optional<HloOpcode> reducer = eval::KernelFoldReducer(*f);
  if (!reducer) Fail("reducer %" + f->name() + " is not add, mul, max, min, and, or or xor");
  // A complex sum is the sums of its parts; no other fold is.
  if (part_ >= 0 && *reducer != HloOpcode::kAdd) Fail("complex values (%" + inst->name() + ")");
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
