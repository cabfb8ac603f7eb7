// A GPU executable as the runtime runs it: PTX, its kernels' launches, the
// device allocations (buffer assignment's, the kernels' scratch, the
// constants), and steps over them: kernel launches, device copies, while
// loops and conditionals whose predicate is read back, and host steps for
// what has no GPU code. Knows no HLO and no LLVM; runs on any GpuDevice
// (the CUDA driver's, or the simulator's).
#ifndef UIR_RUNTIME_GPU_PLAN_H_
#define UIR_RUNTIME_GPU_PLAN_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/gemm.h"
#include "support/primitive_type.h"

namespace uir::runtime {

// A kernel of the PTX module and how it is launched (1-D grids and blocks).
struct GpuKernelInfo {
  std::string name;
  int64_t grid = 1, block = 32, shared_bytes = 0;
};

// The device the plan runs on. Addresses are the device's; memory may be
// the host's (HostVisible), as the simulator's is.
class GpuDevice {
 public:
  virtual ~GpuDevice() = default;
  virtual void* Alloc(int64_t bytes) = 0;
  virtual void Free(void* p) = 0;
  virtual void ToDevice(void* dst, const void* src, int64_t bytes) = 0;
  virtual void ToHost(void* dst, const void* src, int64_t bytes) = 0;
  virtual void Copy(void* dst, const void* src, int64_t bytes) = 0;
  // Kernel `kernel` of the loaded module with one device address per
  // parameter, in order.
  virtual void Launch(int64_t kernel, const std::vector<void*>& args) = 0;
  // The stream custom calls are given (null: the default one).
  virtual void* Stream() { return nullptr; }
  // The library GEMM (f32 or f64) on device memory: cuBLAS on a GPU.
  virtual void Gemm(const GemmPlan& plan, const void* a, const void* b, void* c) = 0;
  virtual void Synchronize() = 0;
  virtual bool HostVisible() const { return false; }
  // Injected timers: a mark recorded after the work enqueued so far (a
  // CUDA event on a GPU), the seconds between two once the device is
  // synchronized, and the mark freed.
  virtual void* Mark() = 0;
  virtual double Seconds(void* from, void* to) = 0;
  virtual void Release(void* mark) = 0;
};

struct GpuRef {
  int64_t allocation = 0, offset = 0;
};

struct GpuStep {
  enum class Kind : uint8_t {
    kLaunch,
    kCopy,
    kGemm,
    kWhile,
    kConditional,
    kCall,
    kCustomCall,
    kHost
  };
  Kind kind = Kind::kLaunch;
  std::string name;  // the Kernel Graph node's
  // kCustomCall: the CUDA target `target` (gpu_custom_call.h) over `args`
  // (operand leaves, then result leaves) with `opaque`.
  // `call_api`: the instruction's convention (0 original, 1 status), for a
  // target registered without one.
  std::string target, opaque;
  int64_t call_api = 0;
  // kLaunch: the kernel and its parameters.
  int64_t kernel = 0;
  std::vector<GpuRef> args;
  // kCopy: `bytes` from `from` to `to`.
  GpuRef from, to;
  int64_t bytes = 0;
  // kGemm: c = op(a) op(b) as `gemm` says, a at `from`, b at `b`, c at `to`.
  GemmPlan gemm;
  GpuRef b;
  // kWhile: body[0] is the condition's steps, body[1] the body's; the
  // predicate (one byte) at `from`. kConditional: one sequence per branch,
  // the selector (pred or s32, `bytes` wide) at `from`. kCall: body[0].
  std::vector<std::vector<GpuStep>> body;
  // kHost: run on the host over every allocation's bytes (the device's
  // copied there and back unless it is host-visible).
  std::function<void(uint8_t* const* allocations)> host;
};

struct GpuPlan {
  std::string ptx;
  std::vector<GpuKernelInfo> kernels;
  std::vector<int64_t> allocation_bytes;
  // Bytes written into allocations before every run: constants.
  struct Preset {
    int64_t allocation = 0, offset = 0;
    std::vector<uint8_t> bytes;
  };
  std::vector<Preset> presets;
  // The array leaves of the parameters and of the result, in order: where
  // they live, their element type and dims, and whether their layout is
  // row-major (a serialized plan's must be: its reader has no layouts).
  struct Leaf {
    GpuRef at;
    int64_t bytes = 0;
    PrimitiveType type = PrimitiveType::kF32;
    std::vector<int64_t> dims;
    bool row_major = true;
  };
  std::vector<Leaf> parameters, results;
  bool tuple_result = false;  // the result is a tuple of the leaves
  std::vector<GpuStep> steps;
  std::string sm;  // the architecture the PTX targets
  // The iGraph text of each kernel (for a simulator); may be empty.
  std::vector<std::string> kernel_igraphs;
};

// The plan as bytes (no host step may be in it: SerializationError names
// the first), and back (SerializationError for damaged or foreign bytes).
std::string SerializeGpuPlan(const GpuPlan& plan);
GpuPlan DeserializeGpuPlan(std::string_view bytes);
// Whether `bytes` start as a serialized GPU plan does.
bool IsGpuPlan(std::string_view bytes);

// One run: device memory for every allocation (taken from and given back
// to `device`), the presets and arguments copied in, the steps, the
// results copied out. `args` and `results` are host buffers of the leaves'
// bytes.
// With `times`, every step run (nested ones included, each time it runs)
// is timed by marks around it: seconds from the first mark.
struct GpuStepTime {
  const GpuStep* step = nullptr;
  int depth = 0;
  double start = 0, end = 0;
};
void RunGpuPlan(const GpuPlan& plan, GpuDevice& device, const std::vector<const uint8_t*>& args,
                const std::vector<uint8_t*>& results, std::vector<GpuStepTime>* times = nullptr);
// The steps alone, timed: memory, presets and arguments set up once, the
// steps run `warmup` times, then `iterations` times between two device
// synchronizations; seconds per run of the steps.
double TimeGpuPlan(const GpuPlan& plan, GpuDevice& device, const std::vector<const uint8_t*>& args,
                   int warmup, int iterations);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GPU_PLAN_H_
