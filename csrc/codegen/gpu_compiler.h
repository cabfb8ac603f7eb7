// The GPU target: a Kernel Graph lowered for the GPU hardware model becomes
// PTX through LLVM's NVPTX back end, one kernel per iGraph. The same
// emitter also writes each kernel for this CPU with the GPU's threads,
// shuffles and barriers simulated (GpuSimulator), so the kernels' logic is
// checked against the evaluator on a machine without a GPU. LLVM-free.
#ifndef UIR_CODEGEN_GPU_COMPILER_H_
#define UIR_CODEGEN_GPU_COMPILER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "igraph/kernel_graph.h"

namespace uir::codegen {

// How one kernel is launched and where its iPointers live.
//  grid x block threads: a block is a group (numUnit warps), a warp a unit;
//  the kernel's parameters are its dram iPointers' addresses, in order;
//  shared_bytes of dynamic shared memory hold sram iPointers (one copy per
//  block) and the reg iPointers that lanes cannot hold (one copy per warp);
//  lane_bytes per thread hold the other reg iPointers, element a of one in
//  lane a % 32 (LLVM keeps them in registers where every index is known).
struct GpuLaunch {
  std::string name;   // the kernel's symbol
  std::string graph;  // the iGraph it runs
  int64_t grid = 1;
  int64_t block = 32;
  int64_t shared_bytes = 0;
  int64_t lane_bytes = 0;
  int64_t params = 0;
  // Whether the kernel has barriers or shuffles (else its threads are
  // independent of each other).
  bool synchronizes = false;
  // Per iPointer: "global" (dram), "shared" (sram), "warp" (reg in shared
  // memory), "lane" (reg in the lanes' registers).
  std::vector<std::string> placement;
};

struct GpuOptions {
  std::string sm = "sm_90";  // the PTX target: sm_70 .. sm_90
  int opt_level = 3;
  bool keep_ir = true;  // keep the optimized LLVM IR's text
};

// The PTX of every iGraph of a Kernel Graph (its sub-graphs' included).
// An iGraph the emitter has no GPU form for is listed in `refused` with its
// reason, and has no kernel.
struct GpuProgram {
  std::string sm;
  std::string ptx;
  std::string llvm_ir;
  std::vector<GpuLaunch> kernels;
  std::vector<std::string> refused;
  // Per iGraph compiled (KernelGraph::AllIGraphs' order): its kernel's
  // index, or -1 when refused.
  std::vector<int64_t> kernel_of;
};

// Throws InternalError when LLVM refuses the module it made (a codegen bug)
// and UserError(kParse) for an unknown `sm`.
GpuProgram CompileGpu(const igraph::KernelGraph& graph, const GpuOptions& options = {});
// One iGraph (lowered for the GPU model) as PTX; throws UnimplementedError
// when it has no GPU form.
GpuProgram CompileGpu(const igraph::IGraph& graph, const GpuOptions& options = {});

// What a simulated kernel's third argument points to: the thread it runs
// as, and the simulator's shuffle and barriers (called with `state` and
// the thread's index in its block).
struct GpuSimThread {
  int64_t tid = 0;
  int64_t ctaid = 0;
  void* state = nullptr;
  // int32_t shuffle(void* state, int64_t tid, int32_t mode, int32_t value,
  // int32_t arg): mode 0 reads `value` of lane (lane ^ arg), mode 1 of
  // lane arg.
  void* shuffle = nullptr;
  void (*barrier)(void* state, int64_t tid) = nullptr;       // the block's
  void (*warp_barrier)(void* state, int64_t tid) = nullptr;  // the warp's
};

// Runs GPU-model iGraphs as the GPU would: each kernel compiled for this
// CPU and run with one thread per GPU thread, block after block, shuffles
// and barriers between those threads. Slow; for checking the kernels
// against the evaluator on small inputs. Refuses (Run returns false for)
// nothing: an iGraph with no GPU form throws UnimplementedError.
class GpuSimulator : public igraph::KernelCode {
 public:
  GpuSimulator();
  ~GpuSimulator() override;
  bool Run(const igraph::IGraph& graph, const igraph::DramBuffers& dram) const override;

 private:
  struct Compiled;
  mutable std::mutex mu_;
  mutable std::map<const igraph::IGraph*, std::shared_ptr<Compiled>> compiled_;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_GPU_COMPILER_H_
