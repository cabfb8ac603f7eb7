// The LLVM side of Jit: adding modules. For codegen's .cc files only.
#ifndef UIR_CODEGEN_JIT_IMPL_H_
#define UIR_CODEGEN_JIT_IMPL_H_

#include <memory>
#include <string>

#include "codegen/jit.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace uir::codegen {

struct Jit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> lljit;
  // The same target as the JIT's compiler; the optimizer asks it for the
  // vector widths and costs of the host.
  std::unique_ptr<llvm::TargetMachine> target_machine;
};

// Sets the host triple and data layout on `module`, verifies it, runs the
// optimization pipeline at the Jit's level and adds it to the JIT.
// Returns the optimized IR as text when `keep_ir` is set, else "".
// Throws InternalError if the module is malformed (a codegen bug).
std::string AddModule(Jit& jit, std::unique_ptr<llvm::Module> module,
                      std::unique_ptr<llvm::LLVMContext> context, bool keep_ir);

// The steps of AddModule one by one, for callers that time or print them.
// Prepare sets the host triple and data layout and verifies; Optimize runs
// the pipeline; Assembly prints the machine code the JIT will produce;
// AddOptimized hands the module to the JIT.
void PrepareModule(Jit& jit, llvm::Module& module);
void OptimizeModule(Jit& jit, llvm::Module& module);
std::string Assembly(Jit& jit, const llvm::Module& module);
void AddOptimizedModule(Jit& jit, std::unique_ptr<llvm::Module> module,
                        std::unique_ptr<llvm::LLVMContext> context);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_JIT_IMPL_H_
