// The row-by-row plan of an iGraph body whose iOps all work along rows:
// every row of the tile runs through all iOps before the next row, and
// consecutive iOps over the same number of columns share one column loop
// in which values pass in registers. Only values read by a later loop are
// stored, in a row buffer of their own. LLVM-free.
#ifndef UIR_CODEGEN_ROW_PLAN_H_
#define UIR_CODEGEN_ROW_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "igraph/igraph.h"

namespace uir::codegen {

struct RowPlan {
  bool ok = false;
  std::string why_not;  // when !ok
  int64_t rows = 0;
  std::vector<int> group;                // per body iOp: its column loop
  std::vector<int64_t> width;            // per column loop: its trip count
  std::vector<std::vector<int>> source;  // per iOp, per input: the writing iOp, -1 for dram
  std::vector<int64_t> buffer;           // per iOp: byte offset of its row buffer, -1 if none
  // Per iOp: a move from dram whose later readers read its dram input
  // again (still in cache: the row was just read) instead of a row buffer.
  std::vector<bool> reread;
  int64_t scratch_bytes = 0;  // row buffers, after the iPointers' scratch
};

// The plan, or ok = false (with the reason) when the body does not qualify:
// one loop id and no prologue or epilogue; only elementwise iOps, row
// broadcasts and row reductions at unit scope, identities that view a local
// slice in place (no work: their readers read the viewed slice's writer);
// every slice of the same
// row count; every local slice read exactly as an earlier iOp wrote it;
// every dram iPointer that is written read only where it is written.
// A move from dram that a later loop reads gets no row buffer when every
// such loop comes no later than the first loop storing to dram (so the
// input is read again before anything, even an output in its place, is
// written over it).
RowPlan PlanRows(const igraph::IGraph& graph);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_ROW_PLAN_H_
