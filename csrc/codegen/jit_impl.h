// The LLVM side of Jit: adding modules. For codegen's .cc files only.
#ifndef UIR_CODEGEN_JIT_IMPL_H_
#define UIR_CODEGEN_JIT_IMPL_H_

#include <memory>
#include <optional>
#include <string>

#include "codegen/jit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
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
  // What made both, for more target machines (one per compiling thread:
  // a TargetMachine is not safe to share between threads).
  std::optional<llvm::orc::JITTargetMachineBuilder> machine_builder;
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

// For compiling several modules at once, one thread each: a target machine
// of the Jit's kind for the thread's own use, the pipeline and the
// assembly printer on it, machine code as an object file, and the object
// handed to the JIT (on one thread at a time).
std::unique_ptr<llvm::TargetMachine> NewTargetMachine(Jit& jit);
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level);
std::string Assembly(llvm::TargetMachine& tm, const llvm::Module& module);
std::unique_ptr<llvm::MemoryBuffer> CompileToObject(llvm::TargetMachine& tm, llvm::Module& module);
void AddObject(Jit& jit, std::unique_ptr<llvm::MemoryBuffer> object);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_JIT_IMPL_H_
