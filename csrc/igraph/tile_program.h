// The first half of lowering a fusion: its computation as a tile program,
// a list of operations over an iteration space whose every memory access
// is a linear function of the iteration indices. Broadcasts, transposes,
// reshapes, bitcasts, slices and reverses disappear into those functions;
// what remains is loads, stores, elementwise work, reductions and
// broadcasts of reduced values back along their rows. tiling.h turns a
// tile program into iGraphs for a hardware model.
#ifndef UIR_IGRAPH_TILE_PROGRAM_H_
#define UIR_IGRAPH_TILE_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::igraph {

// sum(coefficient[d] * index[d]) + constant over the iteration dims.
struct Linear {
  std::vector<int64_t> coefficient;
  int64_t constant = 0;
  bool operator==(const Linear&) const = default;
};

// A dram tensor the kernel reads or writes: a fusion operand, an array
// constant inside the fusion, or an output (one per tuple element).
struct TileTensor {
  // kScratch: a value inside the fusion computed by an earlier program of
  // the same kernel into memory of its own (see BuildTileProgram).
  enum class Kind : uint8_t { kInput, kConstant, kOutput, kScratch };
  Kind kind = Kind::kInput;
  int64_t index = 0;  // operand number, output number; constants count on
  int64_t id = -1;    // its dram iPointer id (-1: its position in tensors)
  std::string name;
  PrimitiveType dtype = PrimitiveType::kF32;
  int64_t elements = 0;
  hlo::Literal literal;  // kConstant
};

struct TileOp {
  enum class Kind : uint8_t {
    kLoad,         // tensor at `access`
    kStore,        // operands[0] to tensor at `access`
    kFill,         // the scalar `literal`
    kIota,         // the value `access` (a linear function of the indices)
    kElementwise,  // `opcode` (unary, binary, select, clamp, compare, convert) on operands
    kReduce,  // operands[0] (full) folded over the reduced dims with `reducer`; operands[1]: init
    kBroadcast,  // operands[0] (reduced) repeated along the reduced dims
    kIdentity,   // operands[0] seen through a reshape or bitcast: the same elements
  };
  Kind kind = Kind::kLoad;
  bool reduced = false;                       // indexed by the kept dims only
  PrimitiveType dtype = PrimitiveType::kF32;  // of the result (store: of the tensor)
  int tensor = -1;
  Linear access;
  hlo::Literal literal;
  hlo::HloOpcode opcode = hlo::HloOpcode::kAdd;  // elementwise op or reducer
  std::string direction;                         // compare: eq, ne, lt, le, gt, ge
  std::vector<int> operands;                     // earlier ops
  std::string source;                            // the HLO instruction it comes from
};

struct TileProgram {
  std::string name;
  std::vector<int64_t> extents;   // the iteration space
  std::vector<bool> reduced_dim;  // true for dims reductions fold over
  std::vector<TileTensor> tensors;
  std::vector<TileOp> ops;  // operands before users
  bool has_reduce() const;
  // A reduced value is broadcast back along its rows: every reduced dim
  // must then be inside one tile, so that a unit sees whole rows.
  bool needs_whole_rows() const;
};

// The most pieces a fusion's iteration space is cut into.
inline constexpr size_t kMaxPieces = 64;

// Builds the tile programs of `fusion` (a fusion instruction, or any
// single elementwise instruction, whose operands become its inputs): one
// per piece of the iteration space, cut where a concatenate or pad changes
// which operand (or the padding value) an output index reads, so that each
// piece's accesses are linear. A concatenate or pad that would cut a row a
// reduction needs whole is computed first, by programs of its own, into a
// scratch tensor the later programs read (listed in `scratch`, in order). Returns false with
// `reason` (one line) when the computation holds something a tile program cannot express: gathers,
// dynamic slices, interior padding, reductions over different dims or
// across a cut, a reshape whose index pattern is not linear, reducers
// other than add, mul, max, min, and, or.
// With `library` (a dot or convolution inside the fusion), that value is
// read as the first scratch tensor and no program computes it: a library
// call does, and the programs are its epilogue.
bool BuildTileProgram(const hlo::HloInstruction& fusion, std::vector<TileProgram>* programs,
                      std::string* reason,
                      std::vector<const hlo::HloInstruction*>* scratch = nullptr,
                      const hlo::HloInstruction* library = nullptr);

// Merges neighbouring iteration dims that every access walks as one
// (coefficient[d] == coefficient[d + 1] * extent[d + 1] everywhere, both
// reduced or both kept). Drops dims of extent 1; a space left with no dim
// (a scalar) gets one of extent 1.
void CollapseDims(TileProgram& program);

std::string TileProgramToText(const TileProgram& program);

// Element strides of each logical dim of `shape` as its layout puts it in
// memory (row-major when it has none).
std::vector<int64_t> PhysicalStrides(const hlo::Shape& shape);
// True when `shape`'s elements lie in memory in row-major order (dims of
// size 1 may sit anywhere in the layout), so logical and physical element
// orders agree.
bool IsRowMajor(const hlo::Shape& shape);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_TILE_PROGRAM_H_
