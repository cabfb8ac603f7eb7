// Tile programs to iGraphs: tile shapes from the hardware model, boxes for
// tails, sections for accumulated reductions (tiling_emit.cc: the iOps).
#include "igraph/tiling.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "hlo/reduction_kind.h"
#include "igraph/tiling_lowerer.h"
#include "support/error.h"

namespace uir::igraph {
namespace detail {

bool IsIdentity(hlo::HloOpcode op, const TileOp& init) {
  const std::optional<hlo::ReductionKind> kind = hlo::ReductionKindOf(op);
  return init.kind == TileOp::Kind::kFill && kind.has_value() &&
         hlo::IsReductionIdentity(*kind, init.literal);
}

std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '.')
    out = "v" + out;
  return out;
}

bool Lowerer::Run(std::vector<IGraph>* parts, std::string* reason) {
  const size_t m = p_.extents.size();
  for (int64_t e : p_.extents) {
    if (e == 0) {
      *reason = "a loop of zero iterations (an empty array): no tile to cut";
      return false;
    }
  }
  col_ = static_cast<int>(m) - 1;
  row_ = static_cast<int>(m) - 2;
  int64_t bytes = 1;
  for (const TileOp& op : p_.ops) bytes = std::max<int64_t>(bytes, StorageBytes(op.dtype));
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
    if (p_.reduced_dim[d] && static_cast<int>(d) != col_ && static_cast<int>(d) != row_ && whole_) {
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
  level_ = !shared && (p_.has_reduce() || transposed || values * lanes * 4 * bytes > hw_.reg_bytes)
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
    // A contiguous dim is spread over the groups only into tiles of a
    // vector or more: narrower ones (columns of [4096, 8] summed two at a
    // time) cost more in lanes left empty than the parallelism gains.
    if (!whole(col_) && ct < std::min(p_.extents[col_], lanes)) {
      ct = Fit(p_.extents[col_], budget, p_.reduced_dim[col_], /*spread=*/false);
    }
  }
  if (row_ >= 0) {
    rt = whole(row_)
             ? p_.extents[row_]
             : Fit(p_.extents[row_], std::max<int64_t>(1, budget / ct), p_.reduced_dim[row_]);
    if (transposed && !whole(col_) && !whole(row_)) {
      // Square tiles of at most 32 x 32: both the strided read and the
      // unit-stride write stay within a few cache lines per row. Over long
      // extents (four tiles or more: parallelism to spare), sides in
      // multiples of 8 let the emitter transpose in register blocks (8 x 8
      // of 4-byte elements): a divisor of the extent of 16 or more if one
      // exists, else the largest such side, and a tail part takes the rest.
      const int64_t side = std::clamp<int64_t>(static_cast<int64_t>(std::sqrt(budget)), 1, 32);
      auto transposed_side = [&](int64_t n, bool spread) {
        if (side >= 16 && n >= 4 * side) {
          for (int64_t t = side / 8 * 8; t >= 16; t -= 8) {
            if (n % t == 0) return t;
          }
          return side / 8 * 8;
        }
        return Fit(n, side, false, spread);
      };
      ct = transposed_side(p_.extents[col_], false);
      rt = transposed_side(p_.extents[row_], true);
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
  // Halves the row tile, else the column tile, where neither is whole;
  // false where it cannot.
  auto shrink = [&] {
    if (rt * ct == 1) return false;
    if (rt > 1 && !whole(row_)) {
      rt = (rt + 1) / 2;
    } else if (!whole(col_)) {
      ct = (ct + 1) / 2;
    } else {
      return false;
    }
    return true;
  };
  const bool shrinkable = !whole_ || level_ == Level::kReg;
  if (shrinkable) {
    // Every value takes its own tile: shrink tiles until they fit.
    while (rt * ct * values * bytes > capacity && shrink()) {
    }
  }
  // The estimate above counts values live at once, but a tile freed by a
  // value of one type is not reused by a value of another (f32 beside s32
  // and pred in a sampler's loop body): where the built graphs still take
  // more than the level holds, the tiles shrink again and the boxes are
  // built anew.
  for (;;) {
    tile_[0] = rt;
    tile_[1] = ct;
    parts->clear();
    if (!Boxes(parts, reason)) return false;
    bool fits = true;
    for (const IGraph& g : *parts) fits = fits && g.BytesAt(level_) <= capacity;
    if (fits) return true;
    if (!shrinkable || !shrink()) break;
  }
  *reason = "tiles of " + std::to_string(rt * ct) + " elements do not fit " +
            std::string(LevelName(level_)) + " (" + std::to_string(capacity) + " bytes)";
  return false;
}

// Every combination of main part and tail of the kept tile dims, one
// iGraph each, at the tile extents tile_.
bool Lowerer::Boxes(std::vector<IGraph>* parts, std::string* reason) {
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

int64_t Lowerer::Fit(int64_t n, int64_t most, bool reduced, bool spread) const {
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

IGraph Lowerer::Box(std::pair<int64_t, int64_t> rows, std::pair<int64_t, int64_t> cols,
                    size_t index) {
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
        if (last_use_[o] == static_cast<int>(i) && !StillShared(g, i, o)) Free(g, values_[o]);
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

std::array<int64_t, 2> Lowerer::TileShape(bool reduced, bool tail) const {
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

}  // namespace detail

bool LowerTileProgram(const TileProgram& program, const HardwareModel& hardware,
                      std::vector<IGraph>* parts, std::string* reason) {
  UIR_CHECK(!program.extents.empty()) << "tile program " << program.name << " is not collapsed";
  parts->clear();
  return detail::Lowerer(program, hardware).Run(parts, reason);
}

}  // namespace uir::igraph
