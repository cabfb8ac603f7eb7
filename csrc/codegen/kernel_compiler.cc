// Builds one LLVM module from a set of iGraphs, optimizes it for the host
// and JIT-compiles it.
#include "codegen/kernel_compiler.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "codegen/emitter.h"
#include "codegen/host.h"
#include "codegen/jit_impl.h"
#include "codegen/llvm_util.h"
#include "codegen/math.h"
#include "igraph/kernel_plan.h"
#include "igraph/verifier.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/TargetParser/Triple.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::codegen {
namespace {

bool HasMachineForm(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::kPred:
    case P::kS1:
    case P::kS2:
    case P::kS4:
    case P::kU1:
    case P::kU2:
    case P::kU4:
    case P::kS8:
    case P::kS16:
    case P::kS32:
    case P::kS64:
    case P::kU8:
    case P::kU16:
    case P::kU32:
    case P::kU64:
    case P::kF16:
    case P::kBF16:
    case P::kF32:
    case P::kF64:
    case P::kF8E5M2:
    case P::kF8E4M3:
    case P::kF8E4M3FN:
    case P::kF8E4M3B11FNUZ:
    case P::kF8E3M4:
    case P::kF8E5M2FNUZ:
    case P::kF8E4M3FNUZ:
    case P::kF6E3M2FN:
    case P::kF6E2M3FN:
    case P::kF4E2M1FN:
      return true;
    default:
      return false;
  }
}

bool HostHasAvx512() {
  static const bool has = [] {
    for (const std::string& f : GetHostInfo().features) {
      if (f == "avx512f") return true;
    }
    return false;
  }();
  return has;
}

// AVX-512 with its 128- and 256-bit forms (math.h's vscalef helpers).
bool HostHasAvx512Vl() {
  static const bool has = [] {
    bool f = false, vl = false;
    for (const std::string& feature : GetHostInfo().features) {
      f = f || feature == "avx512f";
      vl = vl || feature == "avx512vl";
    }
    return f && vl;
  }();
  return has;
}

// The vector width for a kernel when none is asked for; `row_form`: its
// plan has the rows or coalesced form (kernel_plan.h). Such bodies run long column
// loops over whole rows or ranges of tiles: on AVX-512 hosts 512-bit vectors
// halve their instruction count, and their longer remainder costs little
// (measured over 4096x4096 f32 with 2 threads: softmax 10.4 -> 8.3 ms,
// layer norm 4.7 -> 4.1, tanh(a*b+c) at 16M 12.1 -> 11.1; a*b+c and row
// sums unchanged). Tile-by-tile bodies loop over 16 to 64 columns, where
// LLVM's choice for the host (often 256 bits) did as well or better
// (transposes, column sums, a dot's epilogue): 0 leaves it.
int KindVectorBits(bool row_form) { return row_form && HostHasAvx512() ? 512 : 0; }

// The dram iPointers of `graph` a streaming variant writes with
// non-temporal stores: in a row-by-row or coalesced body (`row_form`: long
// runs of consecutive elements), written, of at least `min_bytes`, not read by
// the kernel (itself or at its address: a line just read is in cache, and
// the non-temporal store would only evict it). Empty when there are none.
std::vector<bool> StreamedPointers(const igraph::IGraph& graph, bool row_form,
                                   const DramAliasing* aliasing, int64_t min_bytes) {
  if (min_bytes <= 0 || !row_form) return {};
  const auto& pointers = graph.pointers();
  auto group = [&](int p) {
    return aliasing != nullptr && static_cast<size_t>(p) < aliasing->same_as.size()
               ? aliasing->same_as[static_cast<size_t>(p)]
               : p;
  };
  std::vector<bool> written(pointers.size(), false), read(pointers.size(), false);
  for (const igraph::Section s :
       {igraph::Section::kPrologue, igraph::Section::kBody, igraph::Section::kEpilogue}) {
    for (const igraph::IOp& op : graph.ops(s)) {
      for (int o : op.outputs)
        written[static_cast<size_t>(group(graph.slices()[o].pointer))] = true;
      for (int i : op.inputs) read[static_cast<size_t>(group(graph.slices()[i].pointer))] = true;
    }
  }
  std::vector<bool> out(pointers.size(), false);
  bool any = false;
  for (size_t p = 0; p < pointers.size(); ++p) {
    const igraph::IPointer& ip = pointers[p];
    const auto g = static_cast<size_t>(group(static_cast<int>(p)));
    out[p] = ip.level == igraph::Level::kDram && written[g] && !read[g] &&
             ip.size * StorageBytes(ip.dtype) >= min_bytes;
    any = any || out[p];
  }
  return any ? out : std::vector<bool>();
}

// Makes the vector stores of `fn` through a base its buffer-table load
// promises aligned (`!align`, EmitKernel's `aligned`) non-temporal where
// LLVM proved them aligned to their size (x86's movnt needs that), and
// fences them before each return so that the caller (and the threads it
// hands the result to) see them. Returns whether any store became
// non-temporal.
bool MarkStreamingStores(llvm::Function& fn) {
  const llvm::DataLayout& layout = fn.getParent()->getDataLayout();
  llvm::LLVMContext& ctx = fn.getContext();
  llvm::MDNode* one = llvm::MDNode::get(
      ctx, {llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))});
  bool any = false;
  std::vector<llvm::ReturnInst*> returns;
  for (llvm::BasicBlock& block : fn) {
    for (llvm::Instruction& inst : block) {
      if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(&inst)) returns.push_back(ret);
      auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
      if (store == nullptr || !store->getValueOperand()->getType()->isVectorTy()) continue;
      const uint64_t size = layout.getTypeStoreSize(store->getValueOperand()->getType());
      if (store->getAlign().value() < size || size < 16 || size > 64) continue;
      const auto* base =
          llvm::dyn_cast<llvm::LoadInst>(llvm::getUnderlyingObject(store->getPointerOperand(), 0));
      if (base == nullptr || base->getMetadata(llvm::LLVMContext::MD_align) == nullptr) continue;
      store->setMetadata(llvm::LLVMContext::MD_nontemporal, one);
      any = true;
    }
  }
  if (!any) return false;
  llvm::Function* sfence =
      llvm::Intrinsic::getDeclaration(fn.getParent(), llvm::Intrinsic::x86_sse_sfence);
  for (llvm::ReturnInst* ret : returns) llvm::CallInst::Create(sfence, {}, "", ret);
  return true;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string UnsupportedReason(const igraph::IGraph& graph) {
  for (const igraph::IPointer& p : graph.pointers()) {
    if (!HasMachineForm(p.dtype)) {
      return "no machine form for " + std::string(PrimitiveTypeName(p.dtype)) + " (iPointer " +
             p.name + ")";
    }
  }
  return "";
}

int64_t ScratchBytes(const igraph::IGraph& graph) { return igraph::KernelScratchBytes(graph); }

namespace {

// One of the modules a compile splits its kernels into, compiled on a
// thread of its own from emission to machine code.
struct Part {
  std::vector<size_t> graphs;                  // indices into the compile's graphs
  std::vector<size_t> loops;                   // indices into KernelCompileOptions::loops
  std::unique_ptr<llvm::MemoryBuffer> object;  // null: nothing compiled
  std::string unoptimized_ir, optimized_ir, assembly;
  double emit_seconds = 0, optimize_seconds = 0, codegen_seconds = 0;
  std::exception_ptr error;
};

int64_t Cost(const igraph::IGraph& g) {
  int64_t ops = 0;
  for (const igraph::Section s :
       {igraph::Section::kPrologue, igraph::Section::kBody, igraph::Section::kEpilogue}) {
    ops += static_cast<int64_t>(g.ops(s).size());
  }
  return ops;
}

// Splits the graphs over at most `threads` parts of about equal cost
// (iOps). A loop driver and every kernel it calls share a part, so that the
// optimizer can inline the kernels into the loop.
std::vector<Part> Partition(const std::vector<const igraph::IGraph*>& graphs,
                            const std::vector<LoopDriver>& loops, int threads) {
  // A thread and a target machine cost well under a millisecond: even a
  // compile of two small kernels is no slower split (7.6 and 12 ms for one
  // and two kernels either way; the traced MLP block's three kernels
  // 112 -> 56 ms on 2 threads).
  const size_t parts = std::min<size_t>(static_cast<size_t>(std::clamp(threads, 1, 4)),
                                        std::max<size_t>(graphs.size(), 1));
  std::vector<Part> out(parts);
  std::vector<int64_t> load(out.size(), 0);
  std::vector<bool> placed(graphs.size(), false);
  for (size_t k = 0; k < loops.size(); ++k) {
    out[0].loops.push_back(k);
    for (const auto* calls : {&loops[k].condition, &loops[k].body}) {
      for (const KernelCall& c : *calls) {
        if (c.is_kernel() && c.graph < graphs.size() && !placed[c.graph]) {
          placed[c.graph] = true;
          out[0].graphs.push_back(c.graph);
          load[0] += Cost(*graphs[c.graph]);
        }
      }
    }
  }
  std::vector<size_t> order;
  for (size_t k = 0; k < graphs.size(); ++k) {
    if (!placed[k]) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return Cost(*graphs[a]) > Cost(*graphs[b]); });
  for (size_t k : order) {
    const size_t lightest =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[lightest].graphs.push_back(k);
    load[lightest] += Cost(*graphs[k]);
  }
  // Loops may have drawn every graph into the first part.
  out.erase(
      std::remove_if(out.begin() + 1, out.end(), [](const Part& p) { return p.graphs.empty(); }),
      out.end());
  for (Part& p : out) std::sort(p.graphs.begin(), p.graphs.end());
  return out;
}

}  // namespace

namespace {

// Links `objects` into out.jit and looks up every function named.
void LinkAndLookUp(CompiledKernels& out, std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
                   const std::vector<std::string>& streaming_names,
                   const std::vector<std::string>& loop_names) {
  for (auto& object : objects) AddObject(*out.jit, std::move(object));
  const size_t n = out.names.size();
  out.functions.assign(n, nullptr);
  out.loops.assign(loop_names.size(), nullptr);
  out.streaming.assign(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    if (!out.names[k].empty()) {
      out.functions[k] = reinterpret_cast<KernelFn>(out.jit->Lookup(out.names[k]));
    }
    if (!streaming_names[k].empty()) {
      out.streaming[k] = reinterpret_cast<KernelFn>(out.jit->Lookup(streaming_names[k]));
    }
  }
  for (size_t k = 0; k < loop_names.size(); ++k) {
    if (!loop_names[k].empty()) {
      out.loops[k] = reinterpret_cast<LoopFn>(out.jit->Lookup(loop_names[k]));
    }
  }
}

// The compile from machine code made before.
void Preloaded(CompiledKernels& out, const KernelObjects& objects, size_t graphs, size_t loops) {
  if (objects.names.size() != graphs || objects.reasons.size() != graphs ||
      objects.streaming_names.size() != graphs || objects.streaming_buffers.size() != graphs ||
      objects.loop_names.size() != loops) {
    throw SerializationError("stored machine code for " + std::to_string(objects.names.size()) +
                             " kernels and " + std::to_string(objects.loop_names.size()) +
                             " loops, but the program has " + std::to_string(graphs) + " and " +
                             std::to_string(loops));
  }
  const auto start = std::chrono::steady_clock::now();
  out.names = objects.names;
  out.reasons = objects.reasons;
  out.streaming_buffers = objects.streaming_buffers;
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;
  for (const std::string& o : objects.objects) {
    buffers.push_back(llvm::MemoryBuffer::getMemBufferCopy(o, "uir_kernels"));
  }
  LinkAndLookUp(out, std::move(buffers), objects.streaming_names, objects.loop_names);
  out.codegen_seconds = Since(start);
  out.parts = static_cast<int>(objects.objects.size());
  out.preloaded = true;
}

}  // namespace

CompiledKernels CompileKernels(const std::vector<const igraph::IGraph*>& given,
                               const KernelCompileOptions& options) {
  // Graphs not planned yet (parsed from text without a plan line) get the
  // plan steps first; the emitter carries a plan out.
  std::vector<igraph::IGraph> planned;
  planned.reserve(given.size());
  std::vector<const igraph::IGraph*> graphs = given;
  for (const igraph::IGraph*& g : graphs) {
    if (g->planned()) continue;
    planned.push_back(*g);
    igraph::PlanKernel(planned.back());
    g = &planned.back();
  }
  CompiledKernels out;
  out.jit = std::make_unique<Jit>(JitOptions{options.opt_level});
  if (options.time_loop_bodies && !out.jit->impl().lljit->getTargetTriple().isX86()) {
    throw UnimplementedError("timing loop bodies needs an x86 cycle counter; this host is " +
                             out.jit->impl().lljit->getTargetTriple().str());
  }
  UIR_CHECK(options.objects == nullptr || !options.time_loop_bodies)
      << "stored machine code has no loop-body timers";
  if (options.objects != nullptr) {
    Preloaded(out, *options.objects, graphs.size(), options.loops.size());
    out.objects = options.objects;
    return out;
  }
  out.names.resize(graphs.size());
  out.reasons.resize(graphs.size());
  out.streaming_buffers.resize(graphs.size());
  std::vector<std::string> streaming_names(graphs.size());
  std::vector<std::string> loop_names(options.loops.size());
  const bool is_x86 = out.jit->impl().lljit->getTargetTriple().isX86();
  std::vector<Part> parts =
      Partition(graphs, options.loops,
                options.flags.compile_threads > 0 ? static_cast<int>(options.flags.compile_threads)
                                                  : NumThreads());

  // Each part writes only its own graphs' and loops' entries of `out`,
  // streaming_names and loop_names.
  auto compile = [&](Part& part, std::unique_ptr<llvm::TargetMachine> tm) {
    auto start = std::chrono::steady_clock::now();
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("uir_kernels", *context);
    if (options.flags.target_math && HostHasAvx512Vl())
      module->addModuleFlag(llvm::Module::Warning, kScalefModuleFlag, 1);
    if (options.flags.prefetch)
      module->addModuleFlag(llvm::Module::Warning, kPrefetchModuleFlag, 1);
    bool any = false;
    for (size_t k : part.graphs) {
      const igraph::IGraph& g = *graphs[k];
      out.reasons[k] = UnsupportedReason(g);
      if (!out.reasons[k].empty()) continue;
      igraph::Verify(g);
      const std::string name = "uir_kernel_" + std::to_string(k);
      const DramAliasing* aliasing =
          k < options.aliasing.size() && !options.aliasing[k].same_as.empty() ? &options.aliasing[k]
                                                                              : nullptr;
      const bool row_form = g.plan().row_form();
      const int vector_bits =
          options.flags.vector_bits > 0 ? options.flags.vector_bits : KindVectorBits(row_form);
      auto set_width = [&](const std::string& fn_name) {
        if (vector_bits <= 0) return;
        const std::string bits = std::to_string(vector_bits);
        llvm::Function* fn = module->getFunction(fn_name);
        fn->addFnAttr("prefer-vector-width", bits);
        fn->addFnAttr("min-legal-vector-width", bits);
      };
      const std::string timer = options.time_loop_bodies ? name + "_body_time" : "";
      try {
        EmitKernel(g, name, *module, aliasing, nullptr, timer);
        set_width(name);
      } catch (const UnimplementedError& e) {
        out.reasons[k] = e.what();
        continue;
      }
      out.names[k] = name;
      any = true;
      const std::vector<bool> streamed =
          is_x86 ? StreamedPointers(g, row_form, aliasing, options.flags.streaming_bytes)
                 : std::vector<bool>();
      if (!streamed.empty()) {
        streaming_names[k] = name + "_streaming";
        EmitKernel(g, streaming_names[k], *module, aliasing, &streamed, timer);
        set_width(streaming_names[k]);
        int table = 0;
        for (size_t p = 0; p < g.pointers().size(); ++p) {
          if (g.pointers()[p].level != igraph::Level::kDram) continue;
          if (streamed[p]) out.streaming_buffers[k].push_back(table);
          ++table;
        }
      }
    }
    for (size_t k : part.loops) {
      bool callable = true;
      for (const auto* calls : {&options.loops[k].condition, &options.loops[k].body}) {
        for (const KernelCall& call : *calls) {
          callable = callable && (!call.is_kernel() || (call.graph < out.names.size() &&
                                                        !out.names[call.graph].empty()));
        }
      }
      if (!callable) continue;
      loop_names[k] = "uir_loop_" + std::to_string(k);
      EmitLoopDriver(options.loops[k], out.names, loop_names[k], *module);
    }
    if (!any) return;
    PrepareModule(*out.jit, *module);
    if (options.keep_text) part.unoptimized_ir = PrintModule(*module);
    part.emit_seconds = Since(start);
    start = std::chrono::steady_clock::now();
    OptimizeModule(*module, *tm, options.opt_level);
    for (size_t k : part.graphs) {
      if (streaming_names[k].empty()) continue;
      llvm::Function* fn = module->getFunction(streaming_names[k]);
      if (!MarkStreamingStores(*fn)) {
        // LLVM could not prove any store aligned: the plain function does.
        fn->eraseFromParent();
        streaming_names[k].clear();
        out.streaming_buffers[k].clear();
      }
    }
    part.optimize_seconds = Since(start);
    if (options.keep_text) {
      part.optimized_ir = PrintModule(*module);
      part.assembly = Assembly(*tm, *module);
    }
    start = std::chrono::steady_clock::now();
    part.object = CompileToObject(*tm, *module);
    part.codegen_seconds = Since(start);
  };
  // Target machines are made here, one per part: making them is not
  // documented as safe from several threads.
  std::vector<std::unique_ptr<llvm::TargetMachine>> machines;
  for (size_t p = 0; p < parts.size(); ++p) machines.push_back(NewTargetMachine(*out.jit));
  auto run = [&](size_t p) {
    try {
      compile(parts[p], std::move(machines[p]));
    } catch (...) {
      parts[p].error = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t p = 1; p < parts.size(); ++p) threads.emplace_back(run, p);
  run(0);
  for (std::thread& t : threads) t.join();
  for (Part& part : parts) {
    if (part.error) std::rethrow_exception(part.error);
  }

  auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  for (Part& part : parts) {
    out.emit_seconds = std::max(out.emit_seconds, part.emit_seconds);
    out.optimize_seconds = std::max(out.optimize_seconds, part.optimize_seconds);
    out.codegen_seconds = std::max(out.codegen_seconds, part.codegen_seconds);
    out.unoptimized_ir += part.unoptimized_ir;
    out.optimized_ir += part.optimized_ir;
    out.assembly += part.assembly;
    if (part.object != nullptr) objects.push_back(std::move(part.object));
  }
  auto kept = std::make_shared<KernelObjects>();
  for (const auto& o : objects) kept->objects.emplace_back(o->getBuffer());
  kept->names = out.names;
  kept->reasons = out.reasons;
  kept->streaming_names = streaming_names;
  kept->streaming_buffers = out.streaming_buffers;
  kept->loop_names = loop_names;
  out.objects = std::move(kept);
  LinkAndLookUp(out, std::move(objects), streaming_names, loop_names);
  if (options.time_loop_bodies) {
    out.body_times.assign(graphs.size(), nullptr);
    for (size_t k = 0; k < graphs.size(); ++k) {
      if (out.functions[k] == nullptr) continue;
      out.body_times[k] = static_cast<int64_t*>(out.jit->Lookup(out.names[k] + "_body_time"));
    }
  }
  out.codegen_seconds += Since(start);  // linking and lookups
  out.parts = static_cast<int>(parts.size());
  return out;
}

}  // namespace uir::codegen
