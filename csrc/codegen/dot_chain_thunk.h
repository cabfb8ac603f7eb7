// A dot chain node (igraph::DotChainPlan) as its host thunk runs it: the
// two GEMMs planned once for one block of rows of one batch, then, per
// block, the first GEMM, the epilogue's iGraphs (as machine code where the
// executable has them), the second GEMM, the blocks spread over the worker
// threads.
#ifndef UIR_CODEGEN_DOT_CHAIN_THUNK_H_
#define UIR_CODEGEN_DOT_CHAIN_THUNK_H_

#include <cstdint>
#include <optional>

#include "igraph/kernel_graph.h"
#include "runtime/gemm.h"

namespace uir::codegen {

struct ChainGemms {
  // For one block of one batch; m is set per block.
  runtime::GemmPlan first, second;
  // Elements from one batch to the next, and from one row to the next.
  int64_t a_batch = 0, b_batch = 0, c_batch = 0, out_batch = 0;
  int64_t a_row = 0, out_row = 0;
};

// The GEMMs of a dot chain node on its tensors; nullopt when BLAS cannot
// run them there (the lowering asked CpuLibrary, so only for a node lowered
// for another library).
std::optional<ChainGemms> PlanChainGemms(const igraph::KernelNode& node);

// Runs the chain on memory laid out as buffer assignment says
// (allocations[k] is the base of allocation k).
void RunDotChain(const igraph::KernelNode& node, const ChainGemms& gemms,
                 uint8_t* const* allocations, const igraph::KernelCode* code);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_DOT_CHAIN_THUNK_H_
