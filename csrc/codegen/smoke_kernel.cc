// The float32 add kernel, built with IRBuilder: one counted loop over [begin, end).
#include "codegen/smoke_kernel.h"

#include "codegen/jit_impl.h"
#include "llvm/IR/IRBuilder.h"

namespace uir::codegen {
namespace {

constexpr const char* kAddName = "uir_smoke_add_f32";

std::unique_ptr<llvm::Module> BuildAddModule(llvm::LLVMContext& ctx) {
  auto module = std::make_unique<llvm::Module>("uir_smoke", ctx);
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* ptr = b.getPtrTy();
  auto* fn_type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, i64, i64}, false);
  auto* fn = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, kAddName, *module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned i = 0; i < 3; ++i) fn->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::Argument* a = fn->getArg(0);
  llvm::Argument* bb = fn->getArg(1);
  llvm::Argument* out = fn->getArg(2);
  llvm::Argument* begin = fn->getArg(3);
  llvm::Argument* end = fn->getArg(4);

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);

  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, exit);

  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
  i->addIncoming(begin, entry);
  llvm::Value* x = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, a, i), "x");
  llvm::Value* y = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, bb, i), "y");
  b.CreateStore(b.CreateFAdd(x, y, "sum"), b.CreateInBoundsGEP(f32, out, i));
  llvm::Value* next = b.CreateNSWAdd(i, b.getInt64(1), "next");
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);

  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return module;
}

}  // namespace

AddF32Kernel CompileAddF32Kernel(int opt_level) {
  AddF32Kernel kernel;
  kernel.jit = std::make_unique<Jit>(JitOptions{opt_level});
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto module = BuildAddModule(*ctx);
  kernel.optimized_ir = AddModule(*kernel.jit, std::move(module), std::move(ctx), /*keep_ir=*/true);
  kernel.fn = reinterpret_cast<AddF32Fn>(kernel.jit->Lookup(kAddName));
  return kernel;
}

}  // namespace uir::codegen
