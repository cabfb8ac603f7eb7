// The CPU backend's executable: every iGraph of a Kernel Graph compiled to
// machine code in one module, run over the worker threads. LLVM-free.
#ifndef UIR_CODEGEN_CPU_EXECUTABLE_H_
#define UIR_CODEGEN_CPU_EXECUTABLE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/kernel_compiler.h"
#include "igraph/kernel_graph.h"

namespace uir::codegen {

struct CpuExecutableOptions {
  int opt_level = 3;
  bool keep_text = false;                       // LLVM IR and assembly, for dumps and inspection
  int vector_bits = 0;                          // KernelCompileOptions::vector_bits
  int64_t streaming_bytes = int64_t{16} << 20;  // KernelCompileOptions::streaming_bytes
  // Runs of independent small nodes moving at least this many bytes in all
  // run concurrently (RunConcurrently); below, one after another.
  int64_t concurrent_bytes = int64_t{1} << 16;
  // KernelCompileOptions::compile_threads; 0: the worker thread count.
  int compile_threads = 0;
};

class CpuExecutable : public igraph::KernelCode {
 public:
  ~CpuExecutable() override;
  // Compiles the iGraphs of `graph` (which must outlive the executable).
  CpuExecutable(const igraph::KernelGraph& graph, const CpuExecutableOptions& options = {});

  // Runs the whole graph on `args` (one per entry parameter).
  hlo::Literal Execute(const std::vector<hlo::Literal>& args) const;

  // Runs the whole graph on row-major buffers: `args` holds the array
  // leaves of every parameter in order, `results` those of the entry's
  // result (ResultShapes()). Parameters whose buffer the plan lets it read
  // in place are not copied; results whose allocation holds nothing else are
  // computed in place. A donated parameter (Donations()) whose result
  // buffer is its argument's (results[result] == args[argument]) is
  // updated in place; given separate buffers, the argument is only read.
  // Safe to call from several threads at once.
  void Execute(const std::vector<const uint8_t*>& args, const std::vector<uint8_t*>& results) const;
  // The array leaves of the parameters and of the result, in order.
  const std::vector<hlo::Shape>& ParameterShapes() const { return parameter_shapes_; }
  const std::vector<hlo::Shape>& ResultShapes() const { return result_shapes_; }
  // Result leaves that may be computed in the memory of an argument leaf
  // (the module's input_output_alias, where buffer assignment gave the two
  // one allocation and nothing else): the caller may pass the argument's
  // buffer as the result's.
  struct Donation {
    int64_t argument = 0;
    int64_t result = 0;
  };
  const std::vector<Donation>& Donations() const { return donations_; }

  // igraph::KernelCode: one iGraph on its dram buffers. Small kernels run on
  // the calling thread; larger ones split their parallel ids over the pool.
  bool Run(const igraph::IGraph& graph, const igraph::DramBuffers& dram) const override;
  // igraph::KernelCode: a kernel node whose parts all have code and that
  // needs no scratch of its own, through a plan made once: each buffer is
  // an allocation's base plus an offset (or a constant's memory), so a
  // node costs a function call and no lookups.
  bool RunNode(const igraph::KernelNode& node, const std::vector<uint8_t*>& bases) const override;
  // igraph::KernelCode: a run of consecutive planned nodes, each small
  // enough for one thread, none writing bytes another reads or writes,
  // moving enough memory together to pay for waking a worker: its nodes
  // run at the same time, one per worker.
  size_t RunConcurrently(const igraph::KernelNode& first,
                         const std::vector<uint8_t*>& bases) const override;
  // Such runs: their count and the nodes in them.
  int64_t concurrent_runs() const { return static_cast<int64_t>(runs_.size()); }
  int64_t concurrent_nodes() const;

  // What still runs on the evaluator or the interpreter: the graph's
  // fallback nodes and the iGraphs without code, one line each with the reason.
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  const CompiledKernels& kernels() const { return kernels_; }
  // While loops that run as one compiled function (LoopDriver).
  int64_t native_loops() const { return static_cast<int64_t>(loop_plans_.size()); }

 private:
  struct Entry {
    KernelFn fn = nullptr;
    // The streaming variant (CompiledKernels::streaming), run instead when
    // the buffers it needs aligned are.
    KernelFn streaming = nullptr;
    std::vector<int> streaming_buffers;
    int64_t scratch_bytes = 0;
    int64_t num_parallel = 1;
    int64_t bytes_moved = 0;        // dram traffic, to choose threads
    std::vector<int64_t> dram_ids;  // buffer order of the function
  };
  // A kernel node's parts: the graph each runs (an index into the compiled
  // graphs) and its buffers (an allocation and offset, or the memory of a
  // constant the executable keeps), in the function's buffer order.
  struct PartLayout {
    size_t graph = 0;
    std::vector<BufferRef> buffers;
  };
  struct PartPlan {
    const Entry* entry = nullptr;
    std::vector<BufferRef> buffers;
  };
  struct LoopPlan {
    LoopFn fn = nullptr;
    int64_t scratch_bytes = 0;
  };
  // Before compiling: the layout of every kernel node that needs no scratch
  // of its own, and the while loops made only of such nodes, each kernel
  // small enough to run on one thread.
  void LayOutNodes(const igraph::KernelGraph& graph,
                   const std::vector<const igraph::IGraph*>& graphs);
  void PlanLoops(const igraph::KernelGraph& graph, const std::vector<const igraph::IGraph*>& graphs,
                 std::vector<LoopDriver>& drivers, std::vector<const igraph::KernelNode*>& nodes);
  void Launch(const Entry& e, void** buffers) const;
  // After node_plans_: the runs RunConcurrently takes, in `graph` and its
  // sub-graphs (those moving at least `min_bytes`).
  void PlanConcurrentRuns(const igraph::KernelGraph& graph, int64_t min_bytes);
  // Where each allocation's memory comes from during a run.
  enum class Source : uint8_t { kPool, kArgument, kResult, kDonated };
  struct Placement {
    Source source = Source::kPool;
    int64_t leaf = 0;    // kArgument, kDonated: argument leaf; kResult: result leaf
    int64_t result = 0;  // kDonated: the result leaf computed over the argument
  };
  // The pooled allocations of one run; runs take a set and give it back.
  struct Memory;
  std::unique_ptr<Memory> TakeMemory() const;
  void GiveBack(std::unique_ptr<Memory> memory) const;

  const igraph::KernelGraph& graph_;
  std::vector<igraph::DramTensor> arg_leaves_, result_leaves_;
  std::vector<hlo::Shape> parameter_shapes_, result_shapes_;
  std::vector<Placement> placement_;  // per allocation
  std::vector<Donation> donations_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Memory>> pool_;
  CompiledKernels kernels_;
  absl::flat_hash_map<const igraph::IGraph*, Entry> entries_;
  absl::flat_hash_map<const igraph::KernelNode*, std::vector<PartLayout>> layouts_;
  absl::flat_hash_map<const igraph::KernelNode*, std::vector<PartPlan>> node_plans_;
  absl::flat_hash_map<const igraph::KernelNode*, LoopPlan> loop_plans_;
  absl::flat_hash_map<const igraph::KernelNode*, size_t> runs_;  // first node -> length
  std::deque<std::vector<uint8_t>> constant_memory_;             // addresses stay put
  std::vector<std::string> fallbacks_;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_CPU_EXECUTABLE_H_
