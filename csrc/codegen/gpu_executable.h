// The GPU backend's executable: a Kernel Graph lowered for the GPU model,
// its kernels as PTX, and the plan the runtime runs (runtime/gpu_plan.h):
// a launch per iGraph, device copies, while loops and conditionals with
// their predicate read back, and host steps for nodes with no GPU code
// (listed in fallbacks). Runs on the CUDA driver's device, or on the
// simulator's (the same plan and kernels, on this CPU). LLVM-free.
#ifndef UIR_CODEGEN_GPU_EXECUTABLE_H_
#define UIR_CODEGEN_GPU_EXECUTABLE_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/gpu_compiler.h"
#include "hlo/literal.h"
#include "igraph/kernel_graph.h"
#include "runtime/gpu_plan.h"

namespace uir::codegen {

class GpuExecutable {
 public:
  // `graph` (lowered for the GPU model) must outlive the executable.
  GpuExecutable(const igraph::KernelGraph& graph, const GpuOptions& options = {});
  // An executable Serialize wrote (its kernels' iGraphs with it, for the
  // simulator); throws SerializationError for damaged bytes.
  explicit GpuExecutable(std::string_view serialized);
  ~GpuExecutable();

  // The plan as bytes (runtime/gpu_plan.h); SerializationError when a node
  // runs on the host or a parameter or result is not row-major.
  std::string Serialize() const { return runtime::SerializeGpuPlan(plan_); }

  const GpuProgram& program() const { return program_; }
  const runtime::GpuPlan& plan() const { return plan_; }
  // What has no GPU code, one line each with its reason: refused iGraphs
  // and nodes run as host steps.
  const std::vector<std::string>& fallbacks() const { return fallbacks_; }
  // Why the plan cannot run at all (empty when it can).
  const std::string& unrunnable() const { return unrunnable_; }

  // Runs on the entry's arguments (one literal per parameter) and returns
  // the result: on GPU 0 through the CUDA driver (DeviceError without
  // one), or simulated on this CPU.
  // With `times`, every step is timed (runtime::RunGpuPlan).
  hlo::Literal Run(const std::vector<hlo::Literal>& args,
                   std::vector<runtime::GpuStepTime>* times = nullptr) const;
  hlo::Literal Simulate(const std::vector<hlo::Literal>& args,
                        std::vector<runtime::GpuStepTime>* times = nullptr) const;
  // Bytes a step moves (a kernel's dram traffic, a copy's, a GEMM's
  // operands and result) and the flops of a GEMM, for profiles.
  int64_t BytesOf(const runtime::GpuStep& step) const;
  int64_t FlopsOf(const runtime::GpuStep& step) const;

 private:
  hlo::Literal RunOn(runtime::GpuDevice& device, const std::vector<hlo::Literal>& args,
                     std::vector<runtime::GpuStepTime>* times) const;

  const igraph::KernelGraph* graph_ = nullptr;  // null when deserialized
  GpuProgram program_;
  runtime::GpuPlan plan_;
  std::vector<std::string> fallbacks_;
  std::string unrunnable_;
  // Per plan kernel, the iGraph it runs (for the simulator).
  std::vector<const igraph::IGraph*> kernel_graphs_;
  std::vector<std::unique_ptr<igraph::IGraph>> owned_graphs_;  // deserialized
  std::vector<igraph::DramTensor> parameter_leaves_, result_leaves_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<runtime::GpuDevice> cuda_;
  mutable std::unique_ptr<GpuSimulator> simulator_;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_GPU_EXECUTABLE_H_
