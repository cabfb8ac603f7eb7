// The plan steps: lowering steps that decide how an iGraph runs on its
// target and write each decision into the iGraph, where its text shows it
// (the `plan` header line and each iOp's `{...}`) and parses back. The
// emitter carries the plan out and decides nothing of its own.
//
//   rows       whether the body runs row by row; its column loops, the row
//              buffers values pass through between them, the moves whose
//              readers read their dram input again instead
//   coalesce   whether the parallel ids of a one-row body tile one long
//              vector, so a range of them is one column loop
//   prefetch   which inputs a column loop heavy in arithmetic prefetches,
//              and how far ahead
//   interleave how many vectors a column loop heavy in arithmetic runs
//              side by side
//   transpose  which moves read memory down their columns, and which of
//              those transpose in register blocks
//
// The steps decide for the CPU backend: an iGraph for a gpu keeps the
// loops form with nothing planned (its why says so) until that target has
// steps of its own.
//
// The steps never change what an iGraph computes: the interpreter ignores
// the plan, and a planned kernel must give the interpreter's results.
// LLVM-free.
#ifndef UIR_IGRAPH_KERNEL_PLAN_H_
#define UIR_IGRAPH_KERNEL_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "igraph/igraph.h"

namespace uir::igraph {

// The dataflow of a body that may run row by row: per body iOp, per
// input, the earlier iOp whose value it reads (-1: dram). ok = false with
// the reason when the body does not qualify: one loop id and no prologue
// or epilogue; only elementwise iOps, row broadcasts and row reductions at
// unit scope, identities that view a local slice in place (readers of the
// view read the viewed slice's writer); every slice of the same row count;
// no dram slice read across its rows; every local slice read exactly as an
// earlier iOp wrote it; every dram iPointer that is written read only where
// it is written.
struct RowDataflow {
  bool ok = false;
  std::string why_not;
  int64_t rows = 0;
  std::vector<std::vector<int>> source;
};
RowDataflow AnalyseRows(const IGraph& graph);

// One plan step: its name, what it decides, and the step itself (on a
// graph the steps before it have planned).
struct PlanStep {
  std::string_view name;
  std::string_view doc;
  void (*run)(IGraph& graph);
};
const std::vector<PlanStep>& PlanSteps();

// Runs the plan steps in order on an unplanned graph, through the step
// named `until` when one is given (an unknown name is a UserError).
void PlanKernel(IGraph& graph, std::string_view until = "");

// Empty when the plan is one the emitter can carry out and that keeps the
// graph's results (row buffers apart, values read where they are complete,
// rereads before any store, transposes that fit their slices); else what
// is wrong. The verifier reports it.
std::string PlanProblem(const IGraph& graph);

// The bytes of scratch a kernel of `graph` needs: its reg and sram
// iPointers, then its row buffers.
int64_t KernelScratchBytes(const IGraph& graph);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_KERNEL_PLAN_H_
