// The iGraph emitter: one iGraph becomes one LLVM function with the
// signature of kernel_compiler.h. For codegen's .cc files only.
#ifndef UIR_CODEGEN_EMITTER_H_
#define UIR_CODEGEN_EMITTER_H_

#include <string>
#include <vector>

#include "igraph/igraph.h"
#include "llvm/IR/Module.h"

namespace uir::codegen {

struct LoopDriver;

// Adds the function `name` for `graph` to `module`. Throws
// UnimplementedError (and leaves no function behind) for an iOp or type it
// has no machine form for.
// `disjoint` (when given): per iPointer, true for a dram one whose bytes no
// other dram iPointer of the graph overlaps; its loads and stores get alias
// scopes saying so, which spares the vectorizer runtime overlap checks.
void EmitKernel(const igraph::IGraph& graph, const std::string& name, llvm::Module& module,
                const std::vector<bool>* disjoint = nullptr);

// Adds the function `name` running `loop` (kernel_compiler.h's LoopDriver)
// to `module`, calling the kernels `kernels` names (by graph index; every
// one the loop calls must be defined in `module`).
void EmitLoopDriver(const LoopDriver& loop, const std::vector<std::string>& kernels,
                    const std::string& name, llvm::Module& module);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_EMITTER_H_
