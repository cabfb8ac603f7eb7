// PTX through LLVM's NVPTX back end, and the simulator that runs the same
// kernels on this CPU with one thread per GPU thread.
#include "codegen/gpu_compiler.h"

#include <ucontext.h>

#include <cstring>
#include <functional>
#include <memory>

#include "codegen/gpu_emitter.h"
#include "codegen/jit.h"
#include "codegen/jit_impl.h"
#include "codegen/llvm_util.h"
#include "igraph/interpreter.h"
#include "igraph/verifier.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

void InitializeNvptxOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTargetOnce();  // uir's LLVM options
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::unique_ptr<llvm::TargetMachine> NvptxMachine(const std::string& sm, int opt_level) {
  static const char* const kKnown[] = {"sm_70", "sm_72", "sm_75", "sm_80", "sm_86",
                                       "sm_87", "sm_89", "sm_90", "sm_90a"};
  bool known = false;
  for (const char* k : kKnown) known = known || sm == k;
  if (!known) {
    throw UserError(ErrorKind::kParse,
                    "unknown GPU architecture '" + sm + "'; use one of sm_70 .. sm_90a");
  }
  InitializeNvptxOnce();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  UIR_CHECK(target != nullptr) << "LLVM has no NVPTX target: " << error;
  llvm::TargetOptions options;
  const llvm::CodeGenOptLevel level =
      opt_level <= 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive;
  return std::unique_ptr<llvm::TargetMachine>(
      target->createTargetMachine(kTriple, sm, "", options, std::nullopt, std::nullopt, level));
}

// A kernel's symbol: k<index>_<the iGraph's name, letters and digits>.
std::string KernelName(size_t index, const std::string& graph) {
  std::string name = "k" + std::to_string(index) + "_";
  for (char c : graph) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

void VerifyOrThrow(const llvm::Module& module) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(module, &os)) {
    throw InternalError("the GPU kernels' LLVM IR does not verify: " + errors);
  }
}

GpuProgram Compile(const std::vector<const igraph::IGraph*>& graphs, const GpuOptions& options,
                   bool refuse_throws) {
  std::unique_ptr<llvm::TargetMachine> tm = NvptxMachine(options.sm, options.opt_level);
  llvm::LLVMContext context;
  llvm::Module module("uir_gpu", context);
  module.setTargetTriple(kTriple);
  module.setDataLayout(tm->createDataLayout());
  GpuProgram program;
  program.sm = options.sm;
  for (size_t k = 0; k < graphs.size(); ++k) {
    try {
      program.kernels.push_back(
          EmitGpuKernel(*graphs[k], KernelName(k, graphs[k]->name()), module, GpuFlavor::kPtx));
      program.kernel_of.push_back(static_cast<int64_t>(program.kernels.size()) - 1);
    } catch (const UnimplementedError& e) {
      if (refuse_throws) throw;
      program.refused.push_back(graphs[k]->name() + ": " + e.what());
      program.kernel_of.push_back(-1);
    }
  }
  VerifyOrThrow(module);
  OptimizeModule(module, *tm, options.opt_level);
  VerifyOrThrow(module);
  if (options.keep_ir) program.llvm_ir = PrintModule(module);
  program.ptx = Assembly(*tm, module);
  return program;
}

// A block's GPU threads as fibers on one host thread: each runs until it
// reaches a barrier (a shuffle is two warp barriers around an exchange of
// words), then the next runs; a barrier opens when every thread of its
// warp or block has reached it. When no fiber can run and some have not
// finished, the kernel's threads missed each other's barriers.
struct Fiber {
  ucontext_t context;
  char* stack = nullptr;
  GpuSimThread me;
  bool done = false;
  int waits_on = -1;  // -1 none, else the warp's index, or kBlockWait
  int64_t generation = 0;
};
constexpr int kBlockWait = 1 << 30;
constexpr size_t kFiberStack = 1 << 20;

struct BlockState {
  BlockState(int64_t threads, int64_t warps)
      : fibers(static_cast<size_t>(threads)),
        warp_arrived(static_cast<size_t>(warps), 0),
        warp_generation(static_cast<size_t>(warps), 0),
        words(static_cast<size_t>(threads), 0) {
    // Stacks are kept by the host thread from launch to launch (a launch
    // per kernel per loop iteration would otherwise map and unmap them).
    thread_local std::vector<std::unique_ptr<char[]>> stacks;
    while (stacks.size() < fibers.size()) stacks.emplace_back(new char[kFiberStack]);
    for (size_t i = 0; i < fibers.size(); ++i) fibers[i].stack = stacks[i].get();
  }
  std::vector<Fiber> fibers;
  ucontext_t scheduler;
  size_t current = 0;
  std::vector<int64_t> warp_arrived, warp_generation;
  int64_t block_arrived = 0, block_generation = 0;
  std::vector<int32_t> words;
  std::function<void(GpuSimThread*)> kernel;
  bool stuck = false;

  int64_t Generation(int waits_on) const {
    return waits_on == kBlockWait ? block_generation
                                  : warp_generation[static_cast<size_t>(waits_on)];
  }
  void Wait(int64_t tid, bool block) {
    Fiber& f = fibers[static_cast<size_t>(tid)];
    const int64_t size = block ? static_cast<int64_t>(fibers.size()) : 32;
    int64_t& arrived = block ? block_arrived : warp_arrived[static_cast<size_t>(tid / 32)];
    int64_t& generation = block ? block_generation : warp_generation[static_cast<size_t>(tid / 32)];
    if (++arrived == size) {  // the last to arrive opens it
      arrived = 0;
      ++generation;
      return;
    }
    f.waits_on = block ? kBlockWait : static_cast<int>(tid / 32);
    f.generation = generation;
    swapcontext(&f.context, &scheduler);
    f.waits_on = -1;
  }
  // Runs every fiber to its end; false when they stop at barriers.
  bool Run() {
    for (;;) {
      bool ran = false, all_done = true;
      for (size_t i = 0; i < fibers.size(); ++i) {
        Fiber& f = fibers[i];
        if (f.done) continue;
        all_done = false;
        if (f.waits_on >= 0 && Generation(f.waits_on) == f.generation) continue;
        current = i;
        swapcontext(&scheduler, &f.context);
        ran = true;
      }
      if (all_done) return true;
      if (!ran) return false;
    }
  }
};

thread_local BlockState* tls_block = nullptr;

void FiberMain() {
  BlockState* st = tls_block;
  Fiber& f = st->fibers[st->current];
  st->kernel(&f.me);
  f.done = true;  // returns to the scheduler through uc_link
}

// A fiber that starts at FiberMain on its own stack and returns to `link`.
// Out of line: getcontext returns twice, which the caller's locals must not
// see.
[[gnu::noinline]] void StartFiber(Fiber& f, ucontext_t* link) {
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack;
  f.context.uc_stack.ss_size = kFiberStack;
  f.context.uc_link = link;
  makecontext(&f.context, &FiberMain, 0);
}

int32_t SimShuffle(void* state, int64_t tid, int32_t mode, int32_t value, int32_t arg) {
  auto* st = static_cast<BlockState*>(state);
  st->words[static_cast<size_t>(tid)] = value;
  st->Wait(tid, false);
  const int64_t lane = tid % 32;
  const int64_t from = mode == 0 ? (lane ^ arg) & 31 : arg & 31;
  const int32_t got = st->words[static_cast<size_t>(tid - lane + from)];
  st->Wait(tid, false);
  return got;
}
void SimBarrier(void* state, int64_t tid) { static_cast<BlockState*>(state)->Wait(tid, true); }
void SimWarpBarrier(void* state, int64_t tid) { static_cast<BlockState*>(state)->Wait(tid, false); }

}  // namespace

GpuProgram CompileGpu(const igraph::KernelGraph& graph, const GpuOptions& options) {
  return Compile(graph.AllIGraphs(), options, /*refuse_throws=*/false);
}

GpuProgram CompileGpu(const igraph::IGraph& graph, const GpuOptions& options) {
  return Compile({&graph}, options, /*refuse_throws=*/true);
}

struct GpuSimulator::Compiled {
  GpuLaunch launch;
  void (*kernel)(void* const* dram, void* shared, GpuSimThread* thread) = nullptr;
};

GpuSimulator::GpuSimulator() = default;
GpuSimulator::~GpuSimulator() = default;

namespace {
// One JIT for every simulator of the process: kernels are small and stay.
Jit& SimulatorJit() {
  static Jit* jit = [] {
    InitializeNativeTargetOnce();
    return new Jit(JitOptions{1});
  }();
  return *jit;
}
std::mutex& SimulatorJitMutex() {
  static std::mutex mu;
  return mu;
}
}  // namespace

bool GpuSimulator::Run(const igraph::IGraph& graph, const igraph::DramBuffers& dram) const {
  igraph::Verify(graph);
  std::shared_ptr<Compiled> code;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = compiled_.find(&graph);
    if (it != compiled_.end()) code = it->second;
  }
  if (code == nullptr) {
    static int64_t serial = 0;
    auto made = std::make_shared<Compiled>();
    std::lock_guard<std::mutex> lock(SimulatorJitMutex());
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("uir_gpu_sim", *context);
    const std::string name = KernelName(static_cast<size_t>(serial++), graph.name()) + "_sim";
    made->launch = EmitGpuKernel(graph, name, *module, GpuFlavor::kSimulation);
    Jit& jit = SimulatorJit();
    AddModule(jit, std::move(module), std::move(context), /*keep_ir=*/false);
    made->kernel = reinterpret_cast<decltype(made->kernel)>(jit.Lookup(name));
    std::lock_guard<std::mutex> own(mu_);
    code = compiled_.emplace(&graph, made).first->second;
  }
  std::vector<void*> addresses;
  for (const igraph::IPointer& p : graph.pointers()) {
    if (p.level != igraph::Level::kDram) continue;
    auto it = dram.find(p.id);
    if (it == dram.end() ||
        static_cast<int64_t>(it->second.size()) < p.size * StorageBytes(p.dtype)) {
      throw UserError(ErrorKind::kShape,
                      "iGraph " + graph.name() +
                          ": no buffer (or too small a one) for dram iPointer '" + p.name + "'");
    }
    addresses.push_back(it->second.data());
  }
  const GpuLaunch& launch = code->launch;
  if (!launch.synchronizes) {
    // Threads that never wait for each other: one after another.
    std::vector<uint8_t> shared(static_cast<size_t>(std::max<int64_t>(launch.shared_bytes, 16)));
    GpuSimThread me;
    for (int64_t block = 0; block < launch.grid; ++block) {
      for (int64_t t = 0; t < launch.block; ++t) {
        me.tid = t;
        me.ctaid = block;
        code->kernel(addresses.data(), shared.data(), &me);
      }
    }
    return true;
  }
  BlockState state(launch.block, launch.block / 32);
  std::vector<uint8_t> shared(static_cast<size_t>(std::max<int64_t>(launch.shared_bytes, 16)));
  state.kernel = [&](GpuSimThread* me) { code->kernel(addresses.data(), shared.data(), me); };
  tls_block = &state;
  for (int64_t block = 0; block < launch.grid; ++block) {
    for (int64_t t = 0; t < launch.block; ++t) {
      Fiber& f = state.fibers[static_cast<size_t>(t)];
      f.me = GpuSimThread{};
      f.done = false;
      f.waits_on = -1;
      f.generation = 0;
      f.me.tid = t;
      f.me.ctaid = block;
      f.me.state = &state;
      f.me.shuffle = reinterpret_cast<void*>(&SimShuffle);
      f.me.barrier = &SimBarrier;
      f.me.warp_barrier = &SimWarpBarrier;
      StartFiber(f, &state.scheduler);
    }
    if (!state.Run()) {
      tls_block = nullptr;
      throw InternalError("the simulated GPU kernel of iGraph " + graph.name() +
                          " stopped at a barrier some of its threads never reached (block " +
                          std::to_string(block) + ")");
    }
  }
  tls_block = nullptr;
  return true;
}

}  // namespace uir::codegen
