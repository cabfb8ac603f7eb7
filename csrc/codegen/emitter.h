// The iGraph emitter: one iGraph becomes one LLVM function with the
// signature of kernel_compiler.h. For codegen's .cc files only.
#ifndef UIR_CODEGEN_EMITTER_H_
#define UIR_CODEGEN_EMITTER_H_

#include <string>
#include <vector>

#include "codegen/kernel_compiler.h"
#include "codegen/scalar_emitter.h"
#include "igraph/igraph.h"
#include "llvm/IR/Module.h"

namespace uir::codegen {

struct LoopDriver;

// Adds the function `name` for `graph` (planned: kernel_plan.h) to
// `module`, carrying out its plan. Throws
// UnimplementedError (and leaves no function behind) for an iOp or type it
// has no machine form for.
// `aliasing` (when given) says what buffer assignment knows of the graph's
// dram iPointers (DramAliasing): those at one address share one base
// pointer, so a kernel updating a buffer in place reads and writes through
// the same pointer and vectorizes without a runtime overlap check (which
// would find the overlap and take the scalar loop); disjoint ones get alias
// scopes saying so, which spares the vectorizer the checks.
// `aligned` (when given) marks dram iPointers whose base the caller
// promises 64-byte aligned: their loads from the buffer table say so
// (`!align`), which lets LLVM prove the alignment of the vector accesses
// through them.
// `timer` (when not empty) names a global {ticks, bodies} of two i64s
// (made when the module has none): each loop body (the loop over loop ids,
// or a coalesced range's loop) adds the cycle counter's ticks it took and
// the parallel ids it ran, atomically.
void EmitKernel(const igraph::IGraph& graph, const std::string& name, llvm::Module& module,
                const DramAliasing* aliasing = nullptr, const std::vector<bool>* aligned = nullptr,
                const std::string& timer = "");

// What an elementwise iOp (unary, binary, ternary, compare, convert,
// fill, iota) computes from one element's inputs `x`; an iota at (i, j),
// its base's value at the current index values `iota_base`. Shared by the
// CPU and GPU emitters.
llvm::Value* EmitIOpFunction(ScalarEmitter& s, llvm::IRBuilder<>& b, const igraph::IOp& op,
                             const std::vector<llvm::Value*>& x, llvm::Value* iota_base,
                             llvm::Value* i, llvm::Value* j);

// The value of affine `a` at the index variables' values `vars` (one per
// variable of the iGraph), and `vars`' parallel (or loop) variables set to
// the digits of the mixed-radix number `id`. Shared by both emitters.
llvm::Value* AffineAt(llvm::IRBuilder<>& b, const igraph::Affine& a,
                      const std::vector<llvm::Value*>& vars);
void SetIndexDigits(llvm::IRBuilder<>& b, const igraph::IGraph& g, llvm::Value* id, bool parallel,
                    std::vector<llvm::Value*>& vars);

// The start value of a reduction by `fn` on `t` (its identity, in t's
// compute type).
llvm::Value* ReductionStart(ScalarEmitter& s, llvm::IRBuilder<>& b, igraph::Fn fn, PrimitiveType t);

// Adds the function `name` running `loop` (kernel_compiler.h's LoopDriver)
// to `module`, calling the kernels `kernels` names (by graph index; every
// one the loop calls must be defined in `module`).
void EmitLoopDriver(const LoopDriver& loop, const std::vector<std::string>& kernels,
                    const std::string& name, llvm::Module& module);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_EMITTER_H_
