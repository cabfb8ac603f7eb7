// The GPU kernel emitter: one iGraph lowered for the GPU hardware model
// becomes one kernel. For codegen's .cc files only.
#ifndef UIR_CODEGEN_GPU_EMITTER_H_
#define UIR_CODEGEN_GPU_EMITTER_H_

#include <string>

#include "codegen/gpu_compiler.h"
#include "igraph/igraph.h"
#include "llvm/IR/Module.h"

namespace uir::codegen {

// kPtx: an NVPTX kernel, `void name(ptr addrspace(1) dram0, ...)`, its
// threads, shuffles and barriers NVVM's intrinsics, its shared memory the
// module's dynamic `uir_shared`. kSimulation: the same kernel for this CPU,
// `void name(ptr dram_addresses, ptr shared, ptr GpuSimThread)`, the thread
// and its shuffles and barriers read from and called through the third
// argument.
enum class GpuFlavor : uint8_t { kPtx, kSimulation };

// Adds the kernel `name` for `graph` to `module` and returns its launch.
// Throws UnimplementedError (leaving no function behind) for what has no
// GPU form: an iOp, a type, a function with no NVPTX lowering.
GpuLaunch EmitGpuKernel(const igraph::IGraph& graph, const std::string& name, llvm::Module& module,
                        GpuFlavor flavor);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_GPU_EMITTER_H_
