// Tile programs to iGraphs: tile shapes from the hardware model, boxes for
// tails, sections for accumulated reductions, one slice per access.
#include "igraph/tiling.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace uir::igraph {
namespace {

std::string ReduceName(hlo::HloOpcode op) {
  switch (op) {
    case hlo::HloOpcode::kAdd:
      return "add";
    case hlo::HloOpcode::kMultiply:
      return "mul";
    case hlo::HloOpcode::kMaximum:
      return "max";
    case hlo::HloOpcode::kMinimum:
      return "min";
    case hlo::HloOpcode::kAnd:
      return "and";
    default:
      return "or";
  }
}

// An init value a reduction may leave out: the reducer's identity.
bool IsIdentity(hlo::HloOpcode op, const TileOp& init) {
  if (init.kind != TileOp::Kind::kFill) return false;
  const hlo::Literal& v = init.literal;
  const hlo::PrimitiveType t = v.shape().element_type();
  if (hlo::IsFloat(t)) {
    const double x = v.GetDouble(0);
    switch (op) {
      case hlo::HloOpcode::kAdd:
        return x == 0 && std::signbit(x);
      case hlo::HloOpcode::kMultiply:
        return x == 1;
      case hlo::HloOpcode::kMaximum:
        return std::isinf(x) && x < 0;
      case hlo::HloOpcode::kMinimum:
        return std::isinf(x) && x > 0;
      default:
        return false;
    }
  }
  if (t == hlo::PrimitiveType::kPred) {
    return (op == hlo::HloOpcode::kAnd && v.GetInt64(0) == 1) ||
           (op == hlo::HloOpcode::kOr && v.GetInt64(0) == 0);
  }
  if (op == hlo::HloOpcode::kAdd)
    return hlo::IsSigned(t) ? v.GetInt64(0) == 0 : v.GetUint64(0) == 0;
  if (op == hlo::HloOpcode::kMultiply)
    return hlo::IsSigned(t) ? v.GetInt64(0) == 1 : v.GetUint64(0) == 1;
  return false;
}

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '.')
    out = "v" + out;
  return out;
}

// Where each iteration dim sits in a tile and how it is enumerated.
struct DimPlan {
  int axis = -1;      // 0: tile rows, 1: tile columns, -1: outside the tile
  int64_t tile = 1;   // tile extent along the dim (in this box)
  int64_t start = 0;  // first index of this box
  int var = -1;       // the index variable enumerating it (or its chunks)
  int64_t step = 1;   // index = start + step * var (+ tile offset)
};

class Lowerer {
 public:
  Lowerer(const TileProgram& p, const HardwareModel& hw) : p_(p), hw_(hw) {}

  bool Run(std::vector<IGraph>* parts, std::string* reason) {
    const size_t m = p_.extents.size();
    col_ = static_cast<int>(m) - 1;
    row_ = static_cast<int>(m) - 2;
    int64_t bytes = 1;
    for (const TileOp& op : p_.ops) bytes = std::max<int64_t>(bytes, hlo::StorageBytes(op.dtype));
    const int64_t lanes = std::max<int64_t>(1, hw_.vector_bytes / bytes);
    // Values live at once (each takes a tile), plus two for broadcasts.
    last_use_.assign(p_.ops.size(), -1);
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      for (int o : p_.ops[i].operands) last_use_[o] = static_cast<int>(i);
    }
    // A reshape's view shares its operand's tile: the tile lives as long as both.
    for (size_t i = p_.ops.size(); i-- > 0;) {
      if (p_.ops[i].kind == TileOp::Kind::kIdentity) {
        const int o = p_.ops[i].operands[0];
        last_use_[o] = std::max(last_use_[o], last_use_[i]);
      }
    }
    int64_t values = 0;
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      int64_t live = 0;
      for (size_t j = 0; j <= i; ++j) {
        const TileOp::Kind k = p_.ops[j].kind;
        if (k != TileOp::Kind::kStore && k != TileOp::Kind::kIdentity &&
            last_use_[j] >= static_cast<int>(i)) {
          ++live;
        }
      }
      values = std::max(values, live + 3);
    }
    if (p_.has_reduce() && !p_.needs_whole_rows()) {
      values = std::max<int64_t>(values, static_cast<int64_t>(p_.ops.size()) + 1);
    }
    whole_ = p_.needs_whole_rows();
    for (size_t d = 0; d < m; ++d) {
      if (p_.reduced_dim[d] && static_cast<int>(d) != col_ && static_cast<int>(d) != row_ &&
          whole_) {
        *reason = "a reduced value is broadcast back, but its rows span more than two dims";
        return false;
      }
    }
    // Tile extents.
    // sram is shared by the units of a group: where a group has several
    // units, each keeps its tiles in its own registers.
    const bool shared = hw_.num_unit > 1;
    // Transposes go through sram: tiles read with one stride, written with another.
    bool transposed = false;
    for (const TileOp& op : p_.ops) {
      if ((op.kind == TileOp::Kind::kLoad || op.kind == TileOp::Kind::kStore) && row_ >= 0 &&
          std::abs(op.access.coefficient[col_]) > 1 && std::abs(op.access.coefficient[row_]) == 1) {
        transposed = true;
      }
    }
    level_ =
        !shared && (p_.has_reduce() || transposed || values * lanes * 4 * bytes > hw_.reg_bytes)
            ? Level::kSram
            : Level::kReg;
    const int64_t capacity = level_ == Level::kReg ? hw_.reg_bytes : hw_.sram_bytes;
    const int64_t budget = level_ == Level::kReg && !shared
                               ? lanes * 4
                               : std::clamp<int64_t>(capacity / (values * bytes), 1, 16384);
    auto whole = [&](int d) { return d >= 0 && whole_ && p_.reduced_dim[d]; };
    int64_t ct = 1, rt = 1;
    if (col_ >= 0) {
      // The contiguous dim is not cut for parallelism while rows can be.
      ct = whole(col_) ? p_.extents[col_]
                       : Fit(p_.extents[col_], budget, p_.reduced_dim[col_],
                             row_ < 0 || p_.reduced_dim[row_]);
    }
    if (row_ >= 0) {
      rt = whole(row_)
               ? p_.extents[row_]
               : Fit(p_.extents[row_], std::max<int64_t>(1, budget / ct), p_.reduced_dim[row_]);
      if (transposed && !whole(col_) && !whole(row_)) {
        // Square tiles of at most 32 x 32: both the strided read and the
        // unit-stride write stay within a few cache lines per row.
        const int64_t side = std::clamp<int64_t>(static_cast<int64_t>(std::sqrt(budget)), 1, 32);
        ct = Fit(p_.extents[col_], side, false, false);
        rt = Fit(p_.extents[row_], side, false);
      }
    }
    // Rows too long for one unit's registers are split over the units of
    // a group, which reduce and broadcast together through sram.
    if (whole_ && shared && col_ >= 0 && p_.reduced_dim[col_] &&
        (row_ < 0 || !p_.reduced_dim[row_]) && rt * ct * values * bytes > capacity &&
        p_.extents[col_] % hw_.num_unit == 0) {
      group_ = hw_.num_unit;
      ct = p_.extents[col_] / group_;
      if (row_ >= 0)
        rt = Fit(p_.extents[row_], std::max<int64_t>(1, capacity / (ct * values * bytes)), false);
    }
    if (whole_ && rt * ct * values * bytes > capacity) {
      *reason = "whole rows of " + std::to_string(rt * ct) + " elements do not fit " +
                std::string(LevelName(level_)) + " (" + std::to_string(capacity) + " bytes)";
      return false;
    }
    if (!whole_ || level_ == Level::kReg) {
      // Every value takes its own tile: shrink tiles until they fit.
      while (rt * ct * values * bytes > capacity && rt * ct > 1) {
        if (rt > 1 && !whole(row_)) {
          rt = (rt + 1) / 2;
        } else if (!whole(col_)) {
          ct = (ct + 1) / 2;
        } else {
          break;
        }
      }
    }
    tile_[0] = rt;
    tile_[1] = ct;
    // Boxes: every combination of main part and tail of the kept tile dims.
    std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges;  // per tile axis: (start, tile)
    int reduced_tails = 0;
    for (int axis = 0; axis < 2; ++axis) {
      const int d = axis == 0 ? row_ : col_;
      std::vector<std::pair<int64_t, int64_t>> r;
      if (d < 0) {
        r.push_back({0, 1});
      } else {
        const int64_t t = tile_[axis], n = p_.extents[d];
        r.push_back({0, t});
        if (n % t != 0) {
          if (p_.reduced_dim[d]) {
            ++reduced_tails;
          } else {
            r.push_back({n - n % t, n % t});
          }
        }
      }
      ranges.push_back(r);
    }
    if (reduced_tails > 1) {
      *reason = "both tile dims are reduced and neither divides into tiles";
      return false;
    }
    for (const auto& rr : ranges[0]) {
      for (const auto& cr : ranges[1]) {
        parts->push_back(Box(rr, cr, parts->size()));
      }
    }
    return true;
  }

 private:
  // A tile extent for a dim of `n`: at most `most`, leaving kept dims
  // enough tiles to spread over the groups, and a divisor of n (no tail)
  // when one is at least half as large.
  // `spread`: keep the number of tiles along this dim, times the kept dims
  // outside the tile, at twice the group count or more where possible.
  int64_t Fit(int64_t n, int64_t most, bool reduced, bool spread = true) const {
    if (!reduced && spread) {
      int64_t outside = 1;
      for (size_t d = 0; d < p_.extents.size(); ++d) {
        if (!p_.reduced_dim[d] && static_cast<int>(d) != row_ && static_cast<int>(d) != col_) {
          outside *= p_.extents[d];
        }
      }
      const int64_t want = std::max<int64_t>(1, (2 * hw_.num_group + outside - 1) / outside);
      most = std::min(most, std::max<int64_t>(1, n / want));
    }
    most = std::clamp<int64_t>(most, 1, n);
    for (int64_t t = most; t >= std::max<int64_t>(1, most / 2); --t) {
      if (n % t == 0) return t;
    }
    return most;
  }

  IGraph Box(std::pair<int64_t, int64_t> rows, std::pair<int64_t, int64_t> cols, size_t index) {
    IGraph g(index == 0 ? Sanitize(p_.name) : Sanitize(p_.name) + ".part" + std::to_string(index),
             hw_);
    const size_t m = p_.extents.size();
    plan_.assign(m, DimPlan{});
    box_tile_ = {rows.second, cols.second};
    tail_axis_ = -1;
    // Parallel variables: outer kept dims, then kept tile chunks.
    auto chunks = [&](int d, int axis, std::pair<int64_t, int64_t> range) {
      DimPlan& pl = plan_[d];
      pl.axis = axis;
      pl.tile = range.second;
      pl.start = range.first;
      const int64_t n = p_.extents[d];
      const int64_t count = range.first > 0 ? 1 : n / range.second;
      if (p_.reduced_dim[d] && n % range.second != 0) tail_axis_ = axis;
      pl.step = range.second;
      if (count > 1 && !(group_ > 1 && d == col_)) {  // a group's units hold the chunks
        pl.var = g.AddVar(std::string(axis == 0 ? "r" : "c") + std::to_string(d), count,
                          !p_.reduced_dim[d]);
      }
    };
    for (bool parallel : {true, false}) {
      for (size_t d = 0; d < m; ++d) {
        if (p_.reduced_dim[d] == parallel) continue;
        const int di = static_cast<int>(d);
        if (di == row_) {
          chunks(di, 0, rows);
        } else if (di == col_) {
          chunks(di, 1, cols);
        } else {
          plan_[d].var = g.AddVar("i" + std::to_string(d), p_.extents[d], parallel);
        }
      }
    }
    if (group_ > 1) {
      // The units of a group share rows: unit u holds columns [u*ct, (u+1)*ct).
      std::vector<IndexVar> loops;
      for (const IndexVar& v : g.vars()) {
        if (!v.parallel) loops.push_back(v);
      }
      IGraph fresh(g.name(), hw_);
      for (const IndexVar& v : g.vars()) {
        if (v.parallel) fresh.AddVar(v.name, v.extent, true);
      }
      unit_var_ = fresh.AddVar("u", group_, true);
      // Loop variables keep their order after the parallel ones; shift them.
      for (DimPlan& pl : plan_) {
        if (pl.var >= unit_var_) ++pl.var;
      }
      for (const IndexVar& v : loops) fresh.AddVar(v.name, v.extent, false);
      g = std::move(fresh);
    }
    if (g.vars().empty()) g.AddVar("pid", 1, true);
    // Dram tensors.
    for (size_t t = 0; t < p_.tensors.size(); ++t) {
      const TileTensor& tensor = p_.tensors[t];
      g.AddPointer(IPointer{g.FreshName(Sanitize(tensor.name)),
                            tensor.id >= 0 ? tensor.id : static_cast<int64_t>(t), Level::kDram,
                            tensor.dtype, std::max<int64_t>(1, tensor.elements)});
    }
    values_.assign(p_.ops.size(), -1);
    tiles_.clear();
    free_.clear();
    temps_.clear();
    group_buffers_.clear();
    acc_slice_.clear();
    accumulate_ = false;
    for (size_t d = 0; d < m; ++d) {
      const bool tail = (static_cast<int>(d) == row_ && tail_axis_ == 0) ||
                        (static_cast<int>(d) == col_ && tail_axis_ == 1);
      if (p_.reduced_dim[d] && (plan_[d].var >= 0 || tail)) {
        accumulate_ = true;
      }
    }
    if (!accumulate_) {
      // One pass: a value's tile is reused once its last reader ran.
      for (size_t i = 0; i < p_.ops.size(); ++i) {
        Emit(g, Section::kBody, i, false);
        for (int o : p_.ops[i].operands) {
          if (last_use_[o] == static_cast<int>(i) && p_.ops[o].kind != TileOp::Kind::kIdentity) {
            Free(g, values_[o]);
          }
        }
        for (int t : temps_) Free(g, t);
        temps_.clear();
      }
      return g;
    }
    // Accumulated reductions: reduced values that need no full value go
    // to the prologue; full values and partial reductions to the body;
    // the reduced tail and everything after the reductions to the epilogue.
    std::vector<bool> after(p_.ops.size(), false);
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const TileOp& op = p_.ops[i];
      after[i] = op.kind == TileOp::Kind::kReduce;
      for (int o : op.operands) after[i] = after[i] || (op.reduced && after[o]);
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      if (p_.ops[i].reduced && !after[i]) Emit(g, Section::kPrologue, i, false);
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      if (p_.ops[i].kind == TileOp::Kind::kReduce) Accumulator(g, i);
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      if (!p_.ops[i].reduced || p_.ops[i].kind == TileOp::Kind::kReduce) {
        Emit(g, Section::kBody, i, false);
      }
    }
    if (tail_axis_ >= 0) {
      std::vector<int> saved = values_;
      for (size_t i = 0; i < p_.ops.size(); ++i) {
        if (!p_.ops[i].reduced || p_.ops[i].kind == TileOp::Kind::kReduce) {
          Emit(g, Section::kEpilogue, i, true);
        }
      }
      for (size_t i = 0; i < p_.ops.size(); ++i) {
        if (p_.ops[i].reduced && p_.ops[i].kind != TileOp::Kind::kReduce) values_[i] = saved[i];
      }
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      if (p_.ops[i].kind == TileOp::Kind::kReduce) values_[i] = acc_slice_[i];
    }
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      if (p_.ops[i].reduced && after[i] && p_.ops[i].kind != TileOp::Kind::kReduce) {
        Emit(g, Section::kEpilogue, i, false);
      }
    }
    return g;
  }

  // The tile shape of a value: reduced axes collapse to 1.
  std::array<int64_t, 2> TileShape(bool reduced, bool tail) const {
    std::array<int64_t, 2> s = box_tile_;
    for (int axis = 0; axis < 2; ++axis) {
      const int d = axis == 0 ? row_ : col_;
      if (d < 0) {
        s[axis] = 1;
        continue;
      }
      if (reduced && p_.reduced_dim[d]) s[axis] = 1;
      if (tail && axis == tail_axis_ && !(reduced && p_.reduced_dim[d])) {
        s[axis] = p_.extents[d] % plan_[d].tile;
      }
    }
    return s;
  }

  // A slice of a dram tensor at `access`.
  int DramSlice(IGraph& g, int tensor, const Linear& access, std::array<int64_t, 2> shape,
                bool tail) {
    return g.AddSlice(Access(g, tensor, access, shape, tail));
  }
  ISlice Access(const IGraph& g, int tensor, const Linear& access, std::array<int64_t, 2> shape,
                bool tail) const {
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

  // A fresh tile value (its own pointer at the working level).
  int Tile(IGraph& g, int64_t size, hlo::PrimitiveType dtype, std::array<int64_t, 2> shape,
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
  // Another view of a tile pointer with a new shape (tails reuse pointers).
  int View(IGraph& g, int slice, std::array<int64_t, 2> shape) {
    ISlice s = g.slices()[slice];
    if (s.shape == shape) return slice;
    s.name = g.FreshName(s.name);
    s.shape = shape;
    s.stride = {shape[1], 1};
    return g.AddSlice(std::move(s));
  }

  int Result(IGraph& g, size_t i, std::array<int64_t, 2> shape, hlo::PrimitiveType dtype) {
    if (tiles_.count(i) == 0) {
      const std::array<int64_t, 2> full = TileShape(p_.ops[i].reduced, false);
      tiles_[i] = Tile(g, full[0] * full[1], dtype, shape, "t" + std::to_string(i));
    }
    return View(g, tiles_[i], shape);
  }

  // The sram slice a group reduces and broadcasts `rows` values through.
  int GroupBuffer(IGraph& g, hlo::PrimitiveType dtype, int64_t rows) {
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

  void Free(const IGraph& g, int slice) {
    if (slice < 0) return;
    const int ptr = g.slices()[slice].pointer;
    if (g.pointers()[ptr].level == Level::kDram) return;
    if (std::find(free_.begin(), free_.end(), ptr) == free_.end()) free_.push_back(ptr);
  }

  void Accumulator(IGraph& g, size_t i) {
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

  // `slice` (a (1, 1) value) spread to `shape` with broadcast iOps.
  int Broadcasted(IGraph& g, Section s, int slice, std::array<int64_t, 2> shape,
                  hlo::PrimitiveType dtype) {
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
  void AddBroadcast(IGraph& g, Section s, Axis axis, int t, int from, hlo::PrimitiveType dtype) {
    IOp b;
    b.kind = OpKind::kBroadcast;
    b.axis = axis;
    b.scope = Scope::kUnit;
    b.dtype = dtype;
    b.outputs = {t};
    b.inputs = {from};
    g.AddOp(s, std::move(b));
  }

  // A fill only single-pass reductions read as an init they leave out.
  bool DeadInit(size_t i) const {
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

  void Emit(IGraph& g, Section s, size_t i, bool tail) {
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
          const hlo::PrimitiveType ft = p_.ops[op.operands[0]].dtype;
          const int x = in(0);
          const int diff = Tile(g, 0, ft, shape, "fin");
          IOp sub;
          sub.kind = OpKind::kBinary;
          sub.function = "sub";
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
          io.function = "eq";
          io.dtype = ft;
          io.inputs = {diff, zero};
          io.outputs = {values_[i] = Result(g, i, shape, op.dtype)};
          break;
        }
        if (op.opcode == hlo::HloOpcode::kConvert) {
          io.kind = OpKind::kConvert;
          io.dtype = p_.ops[op.operands[0]].dtype;
          io.to_dtype = op.dtype;
        } else if (op.opcode == hlo::HloOpcode::kCompare) {
          io.kind = OpKind::kCompare;
          io.function = op.direction;
          io.dtype = p_.ops[op.operands[0]].dtype;
        } else if (op.opcode == hlo::HloOpcode::kSelect || op.opcode == hlo::HloOpcode::kClamp) {
          io.kind = OpKind::kTernary;
          io.function = std::string(FunctionName(FunctionClass::kTernary, op.opcode));
        } else if (c == hlo::OpcodeCategory::kUnary) {
          io.kind = OpKind::kUnary;
          io.function = std::string(FunctionName(FunctionClass::kUnary, op.opcode));
        } else {
          io.kind = OpKind::kBinary;
          io.function = std::string(FunctionName(FunctionClass::kBinary, op.opcode));
        }
        for (size_t k = 0; k < op.operands.size(); ++k) {
          const hlo::PrimitiveType dt = p_.ops[op.operands[k]].dtype;
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
          r.function = ReduceName(op.opcode);
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
        io.function = ReduceName(op.opcode);
        io.outputs = {out};
        io.inputs = {other, cur};
        values_[i] = out;
        break;
      }
    }
    g.AddOp(s, std::move(io));
  }

  const TileProgram& p_;
  const HardwareModel& hw_;
  int row_ = -1, col_ = -1;
  bool whole_ = false, accumulate_ = false;
  Level level_ = Level::kReg;
  std::array<int64_t, 2> tile_{1, 1}, box_tile_{1, 1};
  int tail_axis_ = -1;
  int64_t group_ = 1;  // units sharing a row (group scope), 1 when none
  int unit_var_ = -1;
  std::map<hlo::PrimitiveType, int> group_buffers_;
  std::vector<DimPlan> plan_;
  std::vector<int> values_;
  std::vector<int> last_use_;
  std::vector<int> free_;   // pointers whose value is dead
  std::vector<int> temps_;  // broadcast tiles of the op being emitted
  std::map<size_t, int> acc_slice_;
  std::map<size_t, int> tiles_;
};

}  // namespace

bool LowerTileProgram(const TileProgram& program, const HardwareModel& hardware,
                      std::vector<IGraph>* parts, std::string* reason) {
  TileProgram p = program;
  CollapseDims(p);
  if (p.extents.empty()) {
    p.extents = {1};
    p.reduced_dim = {false};
    for (TileOp& op : p.ops) {
      if (op.kind == TileOp::Kind::kLoad || op.kind == TileOp::Kind::kStore ||
          op.kind == TileOp::Kind::kIota) {
        op.access.coefficient = {0};
      }
    }
  }
  parts->clear();
  return Lowerer(p, hardware).Run(parts, reason);
}

}  // namespace uir::igraph
