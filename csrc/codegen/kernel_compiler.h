// Compiles iGraphs to host machine code: one LLVM function per iGraph, all
// of an executable's iGraphs in one LLVM module and one JIT. LLVM-free.
//
// Every compiled iGraph has the signature
//
//   int32_t kernel(void* const* buffers, int64_t parallel_begin,
//                  int64_t parallel_end, void* scratch)
//
// and runs parallel ids [parallel_begin, parallel_end) in order, each with
// its prologue, the loop over loop ids and its epilogue (igraph.h). buffers
// holds the base address of each dram iPointer, in the order of the
// iGraph's pointers (dram ones only); scratch holds the reg and sram
// iPointers, ScratchBytes(graph) bytes aligned to 64, private to the calling
// thread. Returns 0.
#ifndef UIR_CODEGEN_KERNEL_COMPILER_H_
#define UIR_CODEGEN_KERNEL_COMPILER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compile_flags.h"
#include "codegen/jit.h"
#include "igraph/dynamic_slice.h"
#include "igraph/igraph.h"
#include "runtime/kernel_thunk.h"
#include "runtime/thunk.h"
#include "runtime/while_thunk.h"

namespace uir::codegen {

// The runtime's signatures (runtime/kernel_thunk.h, runtime/while_thunk.h).
using runtime::KernelFn;
using runtime::LoopFn;

// Why `graph` cannot be compiled, or "" when it can: element types without
// a machine form yet (4-bit integers, 8-bit floats, complex numbers) and
// group-scope iOps across more than one unit.
std::string UnsupportedReason(const igraph::IGraph& graph);

// Bytes of scratch one thread needs to run `graph`: its reg and sram
// iPointers, each aligned to 64 bytes.
int64_t ScratchBytes(const igraph::IGraph& graph);

// A while loop compiled as one function over the kernels of its condition
// and body,
//
//   void loop(uint8_t* const* allocations, void* scratch, const LoopHook* hooks,
//             const void* const* constants)
//
// which runs the condition's kernels, reads the predicate, and while it is
// true runs the body's kernels and the condition's again: no dispatch per
// kernel, no return to the runtime per iteration. Each kernel runs all its
// parallel ids on the calling thread with `scratch` (as large as the
// largest kernel's). Buffers are a byte offset into one of the run's
// allocations, or memory the caller keeps (constants), which the code
// reads from the `constants` table it is passed: LoopDriver::constants
// lists their addresses in table order, and the code holds none of them.
// A buffer may move on each call (a dynamic window of a scan's input or
// output): by a block offset the loop computes itself (an index program,
// igraph/dynamic_slice.h, compiled in), or by what a hook returns. A call
// may also be a block copy at start indices read on this iteration, or a
// hook alone. Hooks are indices into the table the caller passes, so the
// code holds no address of them.
using runtime::BufferRef;
// The byte offset of a block of `sizes` in a row-major array of `dims`
// (`strides` in bytes) at the start indices steps `starts` compute,
// clamped as XLA clamps them; kInput steps read node input k at inputs[k].
struct BlockProgram {
  std::vector<igraph::IndexStep> steps;
  std::vector<int> starts;
  std::vector<int64_t> dims, sizes, strides;
  std::vector<BufferRef> inputs;
};
struct MovedBuffer {
  size_t buffer = 0;
  std::shared_ptr<const BlockProgram> program;  // or, when null:
  size_t hook = 0;
};
// A contiguous block of `bytes` copied between `whole` (at the program's
// offset) and `block`: into the whole for an update, out of it for a slice.
struct BlockCopy {
  std::shared_ptr<const BlockProgram> program;
  BufferRef whole, block;
  int64_t bytes = 0;
  bool into_whole = false;
};
struct KernelCall {
  size_t graph = 0;  // index into CompileKernels' graphs
  int64_t num_parallel = 1;
  std::vector<BufferRef> buffers;  // the kernel's buffer order
  std::vector<MovedBuffer> moved;
  // Instead of a kernel (graph unused): a block copy, or hook `host` alone.
  std::optional<BlockCopy> copy;
  int64_t host = -1;
  bool is_kernel() const { return !copy && host < 0; }
};
struct LoopDriver {
  std::vector<KernelCall> condition, body;
  BufferRef predicate;  // a pred: one byte, nonzero for true
  // Every address a BufferRef of the calls holds (allocation < 0), once
  // each: the table the compiled loop is passed, in this order.
  std::vector<const void*> constants;
};

// What buffer assignment says of one iGraph's dram iPointers, by index in
// its pointer list. same_as[p]: the first iPointer at p's very address (p
// itself when none comes before it). disjoint[p]: p's bytes overlap no dram
// iPointer's but those at its address. Empty vectors: nothing known.
struct DramAliasing {
  std::vector<int> same_as;
  std::vector<bool> disjoint;
};

struct KernelCompileOptions {
  int opt_level = 3;
  // Keep the LLVM IR (before and after optimization) and the assembly.
  bool keep_text = false;
  // The options users set (compile_flags.def): vector width, target math,
  // prefetches, streaming stores, compile threads (0: the worker count).
  CompileFlags flags;
  // Per graph (empty: nothing known): its dram iPointers' aliasing.
  std::vector<DramAliasing> aliasing;
  // While loops to compile as one function each (LoopDriver).
  std::vector<LoopDriver> loops;
  // Each kernel times its loop bodies (EmitKernel's timer): for profiles
  // of what runs inside a kernel, at the cost of two cycle-counter reads
  // and two atomic adds per parallel id. x86 hosts only.
  bool time_loop_bodies = false;
  // Machine code compiled before (aot.h: a serialized executable's): linked
  // instead of running LLVM's emission, optimizer and code generator. It
  // must come from a compile of the same graphs with the same options
  // (aot.h's KernelProgramDigest says which).
  std::shared_ptr<const struct KernelObjects> objects;
};

// A compile's machine code and what it found, as it can be kept outside the
// process: object files in linking order, and per graph its function's
// name ("" where none), why it has none, its streaming variant's name and
// the buffers that variant needs aligned; per loop its function's name.
struct KernelObjects {
  std::vector<std::string> objects;
  std::vector<std::string> names, reasons, streaming_names;
  std::vector<std::vector<int>> streaming_buffers;
  std::vector<std::string> loop_names;
};

// What one compile produced: the functions (null where UnsupportedReason
// said no), the JIT that owns their code, and, when asked, their text.
struct CompiledKernels {
  std::unique_ptr<Jit> jit;
  std::vector<KernelFn> functions;   // one per input iGraph
  std::vector<std::string> names;    // their LLVM symbols
  std::vector<std::string> reasons;  // why a function is null, else ""
  // One per KernelCompileOptions::loops: null where a kernel it calls did
  // not compile.
  std::vector<LoopFn> loops;
  // Per input iGraph: its streaming variant (null where it has none) and
  // the buffer-table indices that must hold 64-byte aligned addresses for
  // it to run (it assumes them aligned; the plain function does not).
  std::vector<KernelFn> streaming;
  std::vector<std::vector<int>> streaming_buffers;
  std::string unoptimized_ir, optimized_ir, assembly;
  // Per stage, the longest of the parts' times (they overlap).
  double emit_seconds = 0, optimize_seconds = 0, codegen_seconds = 0;
  int parts = 1;  // modules compiled, one per thread
  // With time_loop_bodies: per input iGraph, its {ticks, bodies} counters
  // (null where it has no function).
  std::vector<int64_t*> body_times;
  // The machine code came from KernelCompileOptions::objects (no LLVM pass ran).
  bool preloaded = false;
  // What a serialized executable keeps of this compile.
  std::shared_ptr<const KernelObjects> objects;
};

// Compiles `graphs` (into one module per compiling thread, all in one Jit).
// Each must verify (igraph::Verify).
CompiledKernels CompileKernels(const std::vector<const igraph::IGraph*>& graphs,
                               const KernelCompileOptions& options = {});

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_KERNEL_COMPILER_H_
