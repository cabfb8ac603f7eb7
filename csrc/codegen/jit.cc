// ORC LLJIT set up for the host, and the O0..O3 optimization pipeline.
#include "codegen/jit.h"

#include "codegen/jit_impl.h"
#include "codegen/llvm_util.h"
#include "codegen/math.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/IPO/AlwaysInliner.h"
#include "llvm/Transforms/IPO/GlobalDCE.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "support/error.h"
#include "support/machine.h"

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

// Helpers that must stay calls until the loop vectorizer has replaced them
// with their vector variants (math.h: kLateInlineAttribute) are inlined
// now, and dropped: nothing outside the module calls them.
void InlineLateHelpers(llvm::Module& module, llvm::ModuleAnalysisManager& mam) {
  bool any = false;
  for (llvm::Function& f : module) {
    if (f.isDeclaration() || !f.hasFnAttribute(kLateInlineAttribute)) continue;
    f.removeFnAttr(llvm::Attribute::NoInline);
    f.addFnAttr(llvm::Attribute::AlwaysInline);
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    any = true;
  }
  if (!any) return;
  llvm::ModulePassManager late;
  late.addPass(llvm::AlwaysInlinerPass());
  late.addPass(llvm::GlobalDCEPass());
  late.run(module, mam);
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
  InlineLateHelpers(module, mam);
}

}  // namespace

Jit::Jit(JitOptions options) : options_(options), impl_(std::make_unique<Impl>()) {
  UIR_CHECK(options_.opt_level >= 0 && options_.opt_level <= 3)
      << "opt_level must be 0..3, got " << options_.opt_level;
  InitializeNativeTargetOnce();
  auto jtmb = UnwrapLlvm(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  // UIR_CPU_ISA narrows the host: turning a feature off turns off every
  // feature that implies it (-avx512f: all of AVX-512; -avx: AVX2, FMA...).
  if (IsaVectorLimitBytes() > 0 && IsaVectorLimitBytes() < 64) {
    jtmb.getFeatures().AddFeature("avx512f", false);
    if (IsaVectorLimitBytes() < 32) jtmb.getFeatures().AddFeature("avx", false);
  }
  jtmb.setCodeGenOptLevel(options_.opt_level == 0 ? llvm::CodeGenOptLevel::None
                                                  : llvm::CodeGenOptLevel::Aggressive);
  // JITLink places each object's sections in one block, so code reaches its
  // constants pc-relative (the small code model; calls out of the object go
  // through stubs it makes). A JIT's default, the large model, loads every
  // constant's address with a 64-bit move first: a vector loop short of
  // registers then reloads each constant through two instructions per use.
  jtmb.setCodeModel(llvm::CodeModel::Small);
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  impl_->target_machine = UnwrapLlvm(jtmb.createTargetMachine(), "creating the target machine");
  impl_->machine_builder = jtmb;
  impl_->lljit = UnwrapLlvm(
      llvm::orc::LLJITBuilder()
          .setJITTargetMachineBuilder(std::move(jtmb))
          .setObjectLinkingLayerCreator(
              [](llvm::orc::ExecutionSession& session,
                 const llvm::Triple&) -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                return std::make_unique<llvm::orc::ObjectLinkingLayer>(session);
              })
          .create(),
      "creating the JIT");
  // Generated code calls the C library (libm's sinf, fmodf, memcpy): resolve
  // those names in the process.
  const char prefix = impl_->lljit->getDataLayout().getGlobalPrefix();
  impl_->lljit->getMainJITDylib().addGenerator(
      UnwrapLlvm(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix),
                 "searching the process for symbols"));
}

Jit::~Jit() = default;

void* Jit::Lookup(std::string_view name) {
  auto address = UnwrapLlvm(impl_->lljit->lookup(llvm::StringRef(name.data(), name.size())),
                            "looking up '" + std::string(name) + "'");
  return address.toPtr<void*>();
}

void PrepareModule(Jit& jit, llvm::Module& module) {
  Jit::Impl& impl = jit.impl();
  module.setDataLayout(impl.lljit->getDataLayout());
  module.setTargetTriple(impl.lljit->getTargetTriple().str());
  std::string problems;
  llvm::raw_string_ostream problems_os(problems);
  UIR_CHECK(!llvm::verifyModule(module, &problems_os))
      << "generated LLVM IR does not verify: " << problems;
}

void OptimizeModule(Jit& jit, llvm::Module& module) {
  Optimize(module, *jit.impl().target_machine, jit.options().opt_level);
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  Optimize(module, tm, opt_level);
}

std::string Assembly(llvm::TargetMachine& tm, const llvm::Module& module) {
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  UIR_CHECK(!tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      << "the target cannot print assembly";
  pm.run(*copy);
  return std::string(text.str());
}

std::string Assembly(Jit& jit, const llvm::Module& module) {
  return Assembly(*jit.impl().target_machine, module);
}

std::unique_ptr<llvm::TargetMachine> NewTargetMachine(Jit& jit) {
  return UnwrapLlvm(jit.impl().machine_builder->createTargetMachine(), "creating a target machine");
}

std::unique_ptr<llvm::MemoryBuffer> CompileToObject(llvm::TargetMachine& tm, llvm::Module& module) {
  llvm::orc::SimpleCompiler compiler(tm);
  return UnwrapLlvm(compiler(module), "compiling a module to machine code");
}

void AddObject(Jit& jit, std::unique_ptr<llvm::MemoryBuffer> object) {
  CheckLlvm(jit.impl().lljit->addObjectFile(std::move(object)), "adding machine code to the JIT");
}

void AddOptimizedModule(Jit& jit, std::unique_ptr<llvm::Module> module,
                        std::unique_ptr<llvm::LLVMContext> context) {
  CheckLlvm(jit.impl().lljit->addIRModule(
                llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
            "adding a module to the JIT");
}

std::string AddModule(Jit& jit, std::unique_ptr<llvm::Module> module,
                      std::unique_ptr<llvm::LLVMContext> context, bool keep_ir) {
  PrepareModule(jit, *module);
  OptimizeModule(jit, *module);
  std::string ir = keep_ir ? PrintModule(*module) : std::string();
  AddOptimizedModule(jit, std::move(module), std::move(context));
  return ir;
}

}  // namespace uir::codegen
