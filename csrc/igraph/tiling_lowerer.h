// Internal to the lowering (tiling.cc, tiling_emit.cc): the object that
// turns one tile program into iGraphs, one per box of its iteration space.
#ifndef UIR_IGRAPH_TILING_LOWERER_H_
#define UIR_IGRAPH_TILING_LOWERER_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "igraph/hardware.h"
#include "igraph/igraph.h"
#include "igraph/tile_program.h"

namespace uir::igraph::detail {

// An init value a reduction may leave out: the reducer's identity.
bool IsIdentity(hlo::HloOpcode op, const TileOp& init);
// An HLO name as an iGraph name.
std::string Sanitize(const std::string& name);

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

  bool Run(std::vector<IGraph>* parts, std::string* reason);

 private:
  // A tile extent for a dim of `n`: at most `most`, leaving kept dims
  // enough tiles to spread over the groups, and a divisor of n (no tail)
  // when one is at least half as large.
  // `spread`: keep the number of tiles along this dim, times the kept dims
  // outside the tile, at twice the group count or more where possible.
  int64_t Fit(int64_t n, int64_t most, bool reduced, bool spread = true) const;

  IGraph Box(std::pair<int64_t, int64_t> rows, std::pair<int64_t, int64_t> cols, size_t index);
  // Every combination of main part and tail of the tile dims at tile_, a
  // Box each; false (with `reason`) where both tile dims are reduced and
  // neither divides into tiles.
  bool Boxes(std::vector<IGraph>* parts, std::string* reason);

  // The tile shape of a value: reduced axes collapse to 1.
  std::array<int64_t, 2> TileShape(bool reduced, bool tail) const;

  // A slice of a dram tensor at `access`.
  int DramSlice(IGraph& g, int tensor, const Linear& access, std::array<int64_t, 2> shape,
                bool tail) {
    return g.AddSlice(Access(g, tensor, access, shape, tail));
  }
  ISlice Access(const IGraph& g, int tensor, const Linear& access, std::array<int64_t, 2> shape,
                bool tail) const;

  // A fresh tile value (its own pointer at the working level).
  int Tile(IGraph& g, int64_t size, PrimitiveType dtype, std::array<int64_t, 2> shape,
           const std::string& base);
  // Another view of a tile pointer with a new shape (tails reuse pointers).
  int View(IGraph& g, int slice, std::array<int64_t, 2> shape);

  int Result(IGraph& g, size_t i, std::array<int64_t, 2> shape, PrimitiveType dtype) {
    if (tiles_.count(i) == 0) {
      const std::array<int64_t, 2> full = TileShape(p_.ops[i].reduced, false);
      tiles_[i] = Tile(g, full[0] * full[1], dtype, shape, "t" + std::to_string(i));
    }
    return View(g, tiles_[i], shape);
  }

  // Whether the tile of value `o` (dead after op `i`) is also the tile of a
  // value still live after `i` (a view, or a reduction that folded nothing).
  bool StillShared(const IGraph& g, size_t i, int o) const;

  // The sram slice a group reduces and broadcasts `rows` values through.
  int GroupBuffer(IGraph& g, PrimitiveType dtype, int64_t rows);

  void Free(const IGraph& g, int slice) {
    if (slice < 0) return;
    const int ptr = g.slices()[slice].pointer;
    if (g.pointers()[ptr].level == Level::kDram) return;
    if (std::find(free_.begin(), free_.end(), ptr) == free_.end()) free_.push_back(ptr);
  }

  void Accumulator(IGraph& g, size_t i);

  // `slice` (a (1, 1) value) spread to `shape` with broadcast iOps.
  int Broadcasted(IGraph& g, Section s, int slice, std::array<int64_t, 2> shape,
                  PrimitiveType dtype);
  void AddBroadcast(IGraph& g, Section s, Axis axis, int t, int from, PrimitiveType dtype);

  // A fill only single-pass reductions read as an init they leave out.
  bool DeadInit(size_t i) const;

  void Emit(IGraph& g, Section s, size_t i, bool tail);

  const TileProgram& p_;
  const HardwareModel& hw_;
  int row_ = -1, col_ = -1;
  bool whole_ = false, accumulate_ = false;
  Level level_ = Level::kReg;
  std::array<int64_t, 2> tile_{1, 1}, box_tile_{1, 1};
  int tail_axis_ = -1;
  int64_t group_ = 1;  // units sharing a row (group scope), 1 when none
  int unit_var_ = -1;
  std::map<PrimitiveType, int> group_buffers_;
  std::vector<DimPlan> plan_;
  std::vector<int> values_;
  std::vector<int> last_use_;
  std::vector<int> free_;   // pointers whose value is dead
  std::vector<int> temps_;  // broadcast tiles of the op being emitted
  std::map<size_t, int> acc_slice_;
  std::map<size_t, int> tiles_;
};

}  // namespace uir::igraph::detail

#endif  // UIR_IGRAPH_TILING_LOWERER_H_
