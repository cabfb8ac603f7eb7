// From a Kernel Graph and its compiled kernels to the runtime's thunks.
// LLVM-free: the kernels are already machine code.
#ifndef UIR_CODEGEN_THUNK_EMITTER_H_
#define UIR_CODEGEN_THUNK_EMITTER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "igraph/kernel_graph.h"
#include "runtime/collectives.h"
#include "runtime/kernel_thunk.h"
#include "runtime/thunk_executor.h"
#include "runtime/while_thunk.h"

namespace uir::codegen {

struct NativeLoop {
  runtime::LoopFn fn = nullptr;
  int64_t scratch_bytes = 0;
  std::vector<runtime::LoopHook> hooks;  // the calls out of its code, by index
  std::vector<const void*> constants;    // the memory its kernels read, by index
};

struct ThunkEmitterInputs {
  // Kernel nodes (and library nodes' epilogues) whose every part compiled,
  // each part with its buffers placed.
  const absl::flat_hash_map<const igraph::KernelNode*, std::vector<runtime::KernelPart>>* kernels;
  // While nodes compiled as one function.
  const absl::flat_hash_map<const igraph::KernelNode*, NativeLoop>* loops;
  // What host thunks run iGraphs with (the executable).
  const igraph::KernelCode* code = nullptr;
  runtime::ThunkExecutorOptions options;
  // Where each host thunk that runs the evaluator is listed, "name:
  // reason", with the bytes its node reads and writes (optional).
  std::vector<std::string>* fallbacks = nullptr;
  std::vector<int64_t>* fallback_bytes = nullptr;
  // Where each collective's plan is listed, in the order of their ids
  // (optional): what a run's communicator prepares.
  std::vector<const runtime::CollectivePlan*>* collectives = nullptr;
};

// One thunk per node of `graph`, sub-graphs as nested sequences:
//   kernel        a node in `kernels`
//   copy          a copy whose source and result share shape and layout
//   gemm          a dot BLAS runs on its buffers (GemmOf), then a
//                 kernel thunk for an epilogue
//   while, conditional, call   control flow that runs in place
//   custom-call   a call on row-major buffers (igraph::CustomCallFrameOf)
//   collective    a collective through the run's communicator (CollectiveOf),
//                 in an async-start when it is one's
//   host          anything else, run by the Kernel Graph (RunPrepared), with
//                 what it does in the text
runtime::ThunkExecutor EmitThunks(const igraph::KernelGraph& graph, const ThunkEmitterInputs& in);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_THUNK_EMITTER_H_
