// ORC LLJIT set up for the host, and the O0..O3 optimization pipeline.
#include "codegen/jit.h"

#include "codegen/jit_impl.h"
#include "codegen/llvm_util.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

llvm::OptimizationLevel ToLlvmLevel(int level) {
  switch (level) {
    case 0:
      return llvm::OptimizationLevel::O0;
    case 1:
      return llvm::OptimizationLevel::O1;
    case 2:
      return llvm::OptimizationLevel::O2;
    default:
      return llvm::OptimizationLevel::O3;
  }
}

void Optimize(llvm::Module& module, llvm::TargetMachine& tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = level >= 2;
  tuning.SLPVectorization = level >= 2;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager pipeline =
      level == 0 ? builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                 : builder.buildPerModuleDefaultPipeline(ToLlvmLevel(level));
  pipeline.run(module, mam);
}

}  // namespace

Jit::Jit(JitOptions options) : options_(options), impl_(std::make_unique<Impl>()) {
  UIR_CHECK(options_.opt_level >= 0 && options_.opt_level <= 3)
      << "opt_level must be 0..3, got " << options_.opt_level;
  InitializeNativeTargetOnce();
  auto jtmb = UnwrapLlvm(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  jtmb.setCodeGenOptLevel(options_.opt_level == 0 ? llvm::CodeGenOptLevel::None
                                                  : llvm::CodeGenOptLevel::Aggressive);
  impl_->target_machine = UnwrapLlvm(jtmb.createTargetMachine(), "creating the target machine");
  impl_->lljit =
      UnwrapLlvm(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(),
                 "creating the JIT");
}

Jit::~Jit() = default;

void* Jit::Lookup(std::string_view name) {
  auto address = UnwrapLlvm(impl_->lljit->lookup(llvm::StringRef(name.data(), name.size())),
                            "looking up '" + std::string(name) + "'");
  return address.toPtr<void*>();
}

std::string AddModule(Jit& jit, std::unique_ptr<llvm::Module> module,
                      std::unique_ptr<llvm::LLVMContext> context, bool keep_ir) {
  Jit::Impl& impl = jit.impl();
  module->setDataLayout(impl.lljit->getDataLayout());
  module->setTargetTriple(impl.lljit->getTargetTriple().str());
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  UIR_CHECK(!llvm::verifyModule(*module, &problems_os))
      << "generated LLVM IR does not verify: " << problems;
  Optimize(*module, *impl.target_machine, jit.options().opt_level);
  std::string ir = keep_ir ? PrintModule(*module) : std::string();
  CheckLlvm(
      impl.lljit->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
      "adding a module to the JIT");
  return ir;
}

}  // namespace uir::codegen
