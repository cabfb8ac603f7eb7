// The iGraph emitter: one iGraph becomes one LLVM function with the
// signature of kernel_compiler.h. For codegen's .cc files only.
#ifndef UIR_CODEGEN_EMITTER_H_
#define UIR_CODEGEN_EMITTER_H_

#include <string>
#include <vector>

#include "igraph/igraph.h"
#include "llvm/IR/Module.h"

namespace uir::codegen {

// Adds the function `name` for `graph` to `module`. Throws
// UnimplementedError (and leaves no function behind) for an iOp or type it
// has no machine form for.
// `disjoint` (when given): per iPointer, true for a dram one whose bytes no
// other dram iPointer of the graph overlaps; its loads and stores get alias
// scopes saying so, which spares the vectorizer runtime overlap checks.
void EmitKernel(const igraph::IGraph& graph, const std::string& name, llvm::Module& module,
                const std::vector<bool>* disjoint = nullptr);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_EMITTER_H_
