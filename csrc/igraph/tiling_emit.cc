// Tile programs to iGraphs, op by op: slices for accesses, tiles reused
// once their values die, reductions at unit or group scope.
#include <algorithm>

#include "igraph/tiling_lowerer.h"

namespace uir::igraph::detail {

ISlice Lowerer::Access(const IGraph& g, int tensor, const Linear& access,
                       std::array<int64_t, 2> shape, bool tail) const {
  ISlice s;
  s.name = g.FreshName(g.pointers()[tensor].name + ".s");
  s.pointer = tensor;
  s.offset.constant = access.constant;
  s.shape = shape;
  s.stride = {0, 0};
  for (size_t d = 0; d < p_.extents.size(); ++d) {
    const int64_t c = access.coefficient[d];
    if (c == 0) continue;
    const DimPlan& pl = plan_[d];
    int64_t start = pl.start;
    if (tail && pl.axis == tail_axis_ && pl.axis >= 0) {
      start = p_.extents[d] - p_.extents[d] % pl.tile;
    } else if (pl.var >= 0) {
      s.offset.Add(pl.var, c * pl.step);
    }
    s.offset.constant += c * start;
    if (pl.axis >= 0) s.stride[pl.axis] = c;
    if (group_ > 1 && static_cast<int>(d) == col_) s.offset.Add(unit_var_, c * box_tile_[1]);
  }
  for (int axis = 0; axis < 2; ++axis) {
    if (shape[axis] == 1) s.stride[axis] = axis == 0 ? shape[1] : 1;
  }
  return s;
}

int Lowerer::Tile(IGraph& g, int64_t size, PrimitiveType dtype, std::array<int64_t, 2> shape,
                  const std::string& base) {
  size = std::max(size, shape[0] * shape[1]);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const IPointer& p = g.pointers()[*it];
    if (p.dtype != dtype || p.size < size) continue;
    ISlice s;
    s.name = g.FreshName(p.name + "s");
    s.pointer = *it;
    s.shape = shape;
    s.stride = {shape[1], 1};
    free_.erase(it);
    return g.AddSlice(std::move(s));
  }
  int64_t id = 0;
  for (const IPointer& p : g.pointers()) id = std::max(id, p.id + 1);
  int ptr = g.AddPointer(IPointer{g.FreshName(base), id, level_, dtype, size});
  ISlice s;
  s.name = g.FreshName(base + "s");
  s.pointer = ptr;
  s.shape = shape;
  s.stride = {shape[1], 1};
  return g.AddSlice(std::move(s));
}

int Lowerer::View(IGraph& g, int slice, std::array<int64_t, 2> shape) {
  ISlice s = g.slices()[slice];
  if (s.shape == shape) return slice;
  s.name = g.FreshName(s.name);
  s.shape = shape;
  s.stride = {shape[1], 1};
  return g.AddSlice(std::move(s));
}

bool Lowerer::StillShared(const IGraph& g, size_t i, int o) const {
  if (values_[o] < 0) return false;
  const int ptr = g.slices()[values_[o]].pointer;
  for (size_t j = 0; j <= i; ++j) {
    if (static_cast<int>(j) == o || values_[j] < 0 || last_use_[j] <= static_cast<int>(i)) {
      continue;
    }
    if (g.slices()[values_[j]].pointer == ptr) return true;
  }
  return false;
}

int Lowerer::GroupBuffer(IGraph& g, PrimitiveType dtype, int64_t rows) {
  auto it = group_buffers_.find(dtype);
  if (it != group_buffers_.end()) return it->second;
  const int64_t size = group_ * box_tile_[0];
  int64_t id = 0;
  for (const IPointer& p : g.pointers()) id = std::max(id, p.id + 1);
  const int ptr = g.AddPointer(IPointer{g.FreshName("gbuf"), id, Level::kSram, dtype, size});
  ISlice s;
  s.name = g.FreshName("gbufs");
  s.pointer = ptr;
  s.shape = {1, size};
  s.stride = {size, 1};
  (void)rows;
  return group_buffers_[dtype] = g.AddSlice(std::move(s));
}

void Lowerer::Accumulator(IGraph& g, size_t i) {
  const TileOp& op = p_.ops[i];
  const std::array<int64_t, 2> shape = TileShape(true, false);
  int acc = Tile(g, 0, op.dtype, shape, "acc" + std::to_string(i));
  IOp init;
  init.kind = OpKind::kMove;
  init.from = init.to = level_;
  init.dtype = op.dtype;
  init.outputs = {acc};
  init.inputs = {Broadcasted(g, Section::kPrologue, values_[op.operands[1]], shape, op.dtype)};
  g.AddOp(Section::kPrologue, std::move(init));
  acc_slice_[i] = acc;
}

int Lowerer::Broadcasted(IGraph& g, Section s, int slice, std::array<int64_t, 2> shape,
                         PrimitiveType dtype) {
  std::array<int64_t, 2> have = g.slices()[slice].shape;
  if (have == shape) return slice;
  int cur = slice;
  if (have[1] != shape[1]) {
    int t = Tile(g, 0, dtype, {have[0], shape[1]}, "b");
    AddBroadcast(g, s, Axis::kRow, t, cur, dtype);
    cur = t;
    have[1] = shape[1];
  }
  if (have[0] != shape[0]) {
    int t = Tile(g, 0, dtype, shape, "b");
    AddBroadcast(g, s, Axis::kCol, t, cur, dtype);
    cur = t;
  }
  return cur;
}

void Lowerer::AddBroadcast(IGraph& g, Section s, Axis axis, int t, int from, PrimitiveType dtype) {
  IOp b;
  b.kind = OpKind::kBroadcast;
  b.axis = axis;
  b.scope = Scope::kUnit;
  b.dtype = dtype;
  b.outputs = {t};
  b.inputs = {from};
  g.AddOp(s, std::move(b));
}

bool Lowerer::DeadInit(size_t i) const {
  if (p_.ops[i].kind != TileOp::Kind::kFill || accumulate_) return false;
  bool used = false;
  for (const TileOp& user : p_.ops) {
    for (size_t k = 0; k < user.operands.size(); ++k) {
      if (user.operands[k] != static_cast<int>(i)) continue;
      if (user.kind != TileOp::Kind::kReduce || k != 1 || !IsIdentity(user.opcode, p_.ops[i])) {
        return false;
      }
      used = true;
    }
  }
  return used;
}

void Lowerer::Emit(IGraph& g, Section s, size_t i, bool tail) {
  const TileOp& op = p_.ops[i];
  if (DeadInit(i)) return;
  const std::array<int64_t, 2> shape = TileShape(op.reduced, tail);
  IOp io;
  io.dtype = op.dtype;
  auto in = [&](int k) { return values_[op.operands[k]]; };
  switch (op.kind) {
    case TileOp::Kind::kLoad: {
      const int t = Result(g, i, shape, op.dtype);
      io.kind = OpKind::kMove;
      io.from = Level::kDram;
      io.to = level_;
      io.outputs = {t};
      io.inputs = {DramSlice(g, op.tensor, op.access, shape, tail)};
      values_[i] = t;
      break;
    }
    case TileOp::Kind::kStore:
      io.kind = OpKind::kMove;
      io.from = level_;
      io.to = Level::kDram;
      io.outputs = {DramSlice(g, op.tensor, op.access, shape, tail)};
      io.inputs = {in(0)};
      break;
    case TileOp::Kind::kFill:
      io.kind = OpKind::kFill;
      io.params = {op.literal};
      io.outputs = {values_[i] = Result(g, i, shape, op.dtype)};
      break;
    case TileOp::Kind::kIota: {
      io.kind = OpKind::kIota;
      io.outputs = {values_[i] = Result(g, i, shape, op.dtype)};
      // The iota value is a linear function of the indices: a dram-like
      // slice computation gives its base and steps.
      const ISlice probe = Access(g, 0, op.access, shape, tail);
      io.iota_base = probe.offset;
      io.iota_step = probe.stride;
      for (int axis = 0; axis < 2; ++axis) {
        if (shape[axis] == 1) io.iota_step[axis] = 0;
      }
      break;
    }
    case TileOp::Kind::kElementwise: {
      const hlo::OpcodeCategory c = hlo::OpcodeCategoryOf(op.opcode);
      if (op.opcode == hlo::HloOpcode::kIsFinite) {
        // x - x is 0 exactly when x is finite (inf - inf and nan give nan).
        const PrimitiveType ft = p_.ops[op.operands[0]].dtype;
        const int x = in(0);
        const int diff = Tile(g, 0, ft, shape, "fin");
        IOp sub;
        sub.kind = OpKind::kBinary;
        sub.fn = Fn::kSub;
        sub.dtype = ft;
        sub.outputs = {diff};
        sub.inputs = {x, x};
        g.AddOp(s, std::move(sub));
        const int zero = Tile(g, 0, ft, shape, "fin");
        IOp fill;
        fill.kind = OpKind::kFill;
        fill.dtype = ft;
        fill.params = {hlo::Literal(hlo::Shape(ft, {}))};
        fill.outputs = {zero};
        g.AddOp(s, std::move(fill));
        temps_.push_back(diff);
        temps_.push_back(zero);
        io.kind = OpKind::kCompare;
        io.fn = Fn::kEq;
        io.dtype = ft;
        io.inputs = {diff, zero};
        io.outputs = {values_[i] = Result(g, i, shape, op.dtype)};
        break;
      }
      if (op.opcode == hlo::HloOpcode::kConvert || op.opcode == hlo::HloOpcode::kBitcastConvert) {
        io.kind = OpKind::kConvert;
        if (op.opcode == hlo::HloOpcode::kBitcastConvert) io.fn = Fn::kBitcast;
        io.dtype = p_.ops[op.operands[0]].dtype;
        io.to_dtype = op.dtype;
      } else if (op.opcode == hlo::HloOpcode::kCompare) {
        io.kind = OpKind::kCompare;
        io.fn = FnNamed(op.direction, kCompareFn).value();
        io.dtype = p_.ops[op.operands[0]].dtype;
      } else if (op.opcode == hlo::HloOpcode::kSelect || op.opcode == hlo::HloOpcode::kClamp) {
        io.kind = OpKind::kTernary;
        io.fn = FnFor(kTernaryFn, op.opcode);
      } else if (c == hlo::OpcodeCategory::kUnary) {
        io.kind = OpKind::kUnary;
        io.fn = FnFor(kUnaryFn, op.opcode);
      } else {
        io.kind = OpKind::kBinary;
        io.fn = FnFor(kBinaryFn, op.opcode);
      }
      for (size_t k = 0; k < op.operands.size(); ++k) {
        const PrimitiveType dt = p_.ops[op.operands[k]].dtype;
        const int from = in(static_cast<int>(k));
        const int b = Broadcasted(g, s, from, shape, dt);
        if (b != from) temps_.push_back(b);
        io.inputs.push_back(b);
      }
      io.outputs = {values_[i] = Result(g, i, shape, op.dtype)};
      break;
    }
    case TileOp::Kind::kBroadcast:
      values_[i] = Broadcasted(g, s, in(0), shape, op.dtype);
      return;
    case TileOp::Kind::kIdentity: {
      // A view of the operand's tile: same pointer, offset and shape.
      ISlice view = g.slices()[in(0)];
      view.name = g.FreshName(g.pointers()[view.pointer].name + "v");
      io.kind = OpKind::kIdentity;
      io.dtype = IOp{}.dtype;  // identity carries no dtype (as parsed)
      io.inputs = {in(0)};
      io.outputs = {values_[i] = g.AddSlice(std::move(view))};
      break;
    }
    case TileOp::Kind::kReduce: {
      // Fold the tile's reduced axes, then combine with the init value
      // (single pass) or the accumulator.
      int cur = in(0);
      const std::array<int64_t, 2> from = g.slices()[cur].shape;
      std::array<int64_t, 2> have = from;
      for (int axis = 1; axis >= 0; --axis) {
        const int d = axis == 0 ? row_ : col_;
        if (d < 0 || !p_.reduced_dim[d]) continue;
        have[axis] = 1;
        int t = Tile(g, 0, op.dtype, have, "red");
        IOp r;
        r.kind = OpKind::kReduce;
        r.fn = FnFor(kReduceFn, op.opcode);
        r.axis = axis == 1 ? Axis::kRow : Axis::kCol;
        r.dtype = op.dtype;
        r.outputs = {t};
        r.inputs = {cur};
        if (group_ > 1 && axis == 1) {
          // The group's leader gets the row's result; a group broadcast
          // hands it to every unit of the group.
          r.scope = Scope::kGroup;
          r.buffer = GroupBuffer(g, op.dtype, have[0]);
          r.group_size = group_;
          g.AddOp(s, std::move(r));
          int all = Tile(g, 0, op.dtype, have, "red");
          IOp b;
          b.kind = OpKind::kBroadcast;
          b.axis = Axis::kRow;
          b.scope = Scope::kGroup;
          b.dtype = op.dtype;
          b.buffer = GroupBuffer(g, op.dtype, have[0]);
          b.group_size = group_;
          b.outputs = {all};
          b.inputs = {t};
          g.AddOp(s, std::move(b));
          Free(g, t);
          cur = all;
          continue;
        }
        g.AddOp(s, std::move(r));
        cur = t;
      }
      const bool acc = accumulate_;
      if (!acc && IsIdentity(op.opcode, p_.ops[op.operands[1]])) {
        values_[i] = cur;
        return;
      }
      const int other = acc ? acc_slice_[i] : Broadcasted(g, s, in(1), have, op.dtype);
      const int out = acc ? acc_slice_[i] : Result(g, i, have, op.dtype);
      io.kind = OpKind::kBinary;
      io.fn = FnFor(kReduceFn, op.opcode);
      io.outputs = {out};
      io.inputs = {other, cur};
      values_[i] = out;
      break;
    }
  }
  g.AddOp(s, std::move(io));
}

}  // namespace uir::igraph::detail
