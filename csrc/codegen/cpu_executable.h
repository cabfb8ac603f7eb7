// The CPU backend's executable: every iGraph of a Kernel Graph compiled to
// machine code in one module, run over the worker threads. LLVM-free.
#ifndef UIR_CODEGEN_CPU_EXECUTABLE_H_
#define UIR_CODEGEN_CPU_EXECUTABLE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/kernel_compiler.h"
#include "codegen/thunk_emitter.h"
#include "igraph/kernel_graph.h"
#include "runtime/thunk_executor.h"

namespace uir::runtime {
class Communicator;
struct CollectivePlan;
}  // namespace uir::runtime

namespace uir::codegen {

struct CpuExecutableOptions {
  int opt_level = 3;
  bool keep_text = false;  // LLVM IR and assembly, for dumps and inspection
  // The options users set (compile_flags.def); concurrent_bytes is the
  // thunk executor's, the rest the kernel compiler's.
  CompileFlags flags;
  // The worker threads native loops are planned for (a loop whose kernels
  // would be worth splitting over several threads runs node by node); 0:
  // this process's count. A loaded executable plans for its compile's.
  int plan_threads = 0;
  // KernelCompileOptions::time_loop_bodies: kernels time their loop bodies
  // (LoopBodyTimes).
  bool time_loop_bodies = false;
  // KernelCompileOptions::objects: machine code compiled before (aot.h).
  std::shared_ptr<const KernelObjects> objects;
};

class CpuExecutable : public igraph::KernelCode {
 public:
  ~CpuExecutable() override;
  // Compiles the iGraphs of `graph` (which must outlive the executable) and
  // emits its thunks.
  CpuExecutable(const igraph::KernelGraph& graph, const CpuExecutableOptions& options = {});

  // Runs the whole graph on row-major buffers: `args` holds the array
  // leaves of every parameter in order, `results` those of the entry's
  // result (ResultShapes()). Parameters whose buffer the plan lets it read
  // in place are not copied; results whose allocation holds nothing else are
  // computed in place. A donated parameter (Donations()) whose result
  // buffer is its argument's (results[result] == args[argument]) is
  // updated in place; given separate buffers, the argument is only read.
  // Safe to call from several threads at once.
  // With `profiler`, every thunk's time is recorded there (profiler.h).
  // An executable with collectives of several participants runs as
  // `communicator`'s participant (collectives.h): every participant calls
  // Execute with its own; without one it throws DistributedError. One of a
  // single participant needs none. When this run fails, the communicator
  // is told (Communicator::Fail), so that the others do not wait for it.
  void Execute(const std::vector<const uint8_t*>& args, const std::vector<uint8_t*>& results,
               runtime::Profiler* profiler = nullptr,
               runtime::Communicator* communicator = nullptr) const;
  // How many participants its collectives meet (hlo::RequiredParticipants
  // of its module), and its collectives' plans in the order of their ids.
  int participants() const { return participants_; }
  const std::vector<const runtime::CollectivePlan*>& collectives() const { return collectives_; }
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

  // igraph::KernelCode: one iGraph on its dram buffers (for host thunks,
  // which run nodes through the Kernel Graph). Small kernels run on the
  // calling thread; larger ones split their parallel ids over the pool.
  bool Run(const igraph::IGraph& graph, const igraph::DramBuffers& dram) const override;

  // The entry's thunks (EmitThunks), which a run executes.
  const runtime::ThunkExecutor& thunks() const { return *thunks_; }

  // What still runs on the evaluator or the interpreter: the graph's
  // fallback nodes and the iGraphs without code, one line each with the reason.
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  // Per fallback, the bytes its node reads and writes (0 for a refused
  // iGraph): what the cost of running it on the evaluator is estimated by.
  const std::vector<int64_t>& fallback_bytes() const { return fallback_bytes_; }
  const CompiledKernels& kernels() const { return kernels_; }
  // With time_loop_bodies: per compiled iGraph (of a node run as a kernel,
  // in a thunk or a native loop), the cycle-counter ticks its loop bodies
  // took, summed over the threads that ran them, and how many bodies (parallel
  // ids) ran, since the last reset; in node order. Empty without.
  struct LoopBodyTime {
    std::string node, graph;  // the Kernel Graph node's name, the iGraph's
    int64_t ticks = 0, bodies = 0;
  };
  std::vector<LoopBodyTime> LoopBodyTimes() const;
  void ResetLoopBodyTimes() const;
  // Ticks of the cycle counter the timers read, per second (measured once).
  static double TicksPerSecond();

  // What it was compiled from and with (plan_threads resolved), and what
  // its kernels were compiled with (aliasing, native loops), for
  // serializing it (aot.h).
  const igraph::KernelGraph& graph() const { return graph_; }
  const CpuExecutableOptions& options() const { return options_; }
  const KernelCompileOptions& compile_options() const { return compile_options_; }
  // While loops that run as one compiled function (LoopDriver).
  int64_t native_loops() const { return static_cast<int64_t>(loops_.size()); }

 private:
  // A kernel node's parts: the graph each runs (an index into the compiled
  // graphs) and its buffers (an allocation and offset, or the memory of a
  // constant the executable keeps), in the function's buffer order.
  struct PartLayout {
    size_t graph = 0;
    std::vector<BufferRef> buffers;
    std::vector<int64_t> ids;  // each buffer's dram id in the node's numbering
  };
  // What a native loop's hook does, on one node's tensors (RunLoopHook).
  struct LoopHookContext {
    // kCopyOperand: a dynamic-update-slice's operand into its output
    // (when not in place); kDynamicCopy: a lone dynamic slice or update
    // whose block is not contiguous.
    enum class Kind : uint8_t { kCopyOperand, kDynamicCopy };
    Kind kind = Kind::kCopyOperand;
    const igraph::KernelNode* node = nullptr;
  };
  static int64_t RunLoopHook(const void* ctx, uint8_t* const* allocations);
  static std::optional<BlockCopy> CompiledBlockCopy(const igraph::KernelNode& node);
  // Before compiling: the layout of every kernel node that needs no scratch
  // of its own but a library result, and the while loops made only of
  // such nodes, each kernel small enough to run on one thread.
  void LayOutNodes(const igraph::KernelGraph& graph,
                   const std::vector<const igraph::IGraph*>& graphs);
  void PlanLoops(const igraph::KernelGraph& graph, const std::vector<const igraph::IGraph*>& graphs,
                 std::vector<LoopDriver>& drivers, std::vector<const igraph::KernelNode*>& nodes);
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
  CpuExecutableOptions options_;
  KernelCompileOptions compile_options_;
  std::vector<igraph::DramTensor> arg_leaves_, result_leaves_;
  std::vector<hlo::Shape> parameter_shapes_, result_shapes_;
  std::vector<Placement> placement_;  // per allocation
  std::vector<Donation> donations_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Memory>> pool_;
  CompiledKernels kernels_;
  // Every compiled iGraph as a kernel part without buffers.
  absl::flat_hash_map<const igraph::IGraph*, runtime::KernelPart> parts_;
  absl::flat_hash_map<const igraph::KernelNode*, std::vector<PartLayout>> layouts_;
  // The nodes whose every part compiled, their parts with buffers.
  absl::flat_hash_map<const igraph::KernelNode*, std::vector<runtime::KernelPart>> node_parts_;
  absl::flat_hash_map<const igraph::KernelNode*, NativeLoop> loops_;
  std::deque<LoopHookContext> hook_contexts_;                  // addresses stay put
  std::vector<std::vector<runtime::LoopHook>> planned_hooks_;  // per planned loop
  std::deque<std::vector<uint8_t>> constant_memory_;           // addresses stay put
  std::vector<std::string> fallbacks_;
  std::vector<int64_t> fallback_bytes_;
  int participants_ = 1;
  uint64_t fingerprint_ = 0;  // the module's: what participants check they share
  std::vector<const runtime::CollectivePlan*> collectives_;
  std::unique_ptr<runtime::ThunkExecutor> thunks_;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_CPU_EXECUTABLE_H_
