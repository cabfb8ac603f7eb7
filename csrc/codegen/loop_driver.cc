// A while loop as one LLVM function calling its kernels (LoopDriver).
#include <algorithm>
#include <cstddef>

#include "codegen/emitter.h"
#include "codegen/kernel_compiler.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "support/error.h"

namespace uir::codegen {

static_assert(sizeof(runtime::LoopHook) == 2 * sizeof(void*) &&
                  offsetof(runtime::LoopHook, ctx) == sizeof(void*),
              "the loop driver reads hooks as {fn, ctx} pairs of pointers");

void EmitLoopDriver(const LoopDriver& loop, const std::vector<std::string>& kernels,
                    const std::string& name, llvm::Module& module) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::FunctionType* kernel_type =
      llvm::FunctionType::get(b.getInt32Ty(), {ptr, i64, i64, ptr}, false);
  llvm::FunctionType* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr}, false);
  llvm::FunctionType* hook_type = llvm::FunctionType::get(i64, {ptr, ptr}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Argument* allocations = fn->getArg(0);
  llvm::Argument* scratch = fn->getArg(1);
  llvm::Argument* hooks = fn->getArg(2);
  allocations->setName("allocations");
  scratch->setName("scratch");
  hooks->setName("hooks");

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* cond = llvm::BasicBlock::Create(ctx, "condition", fn);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "body", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "exit", fn);

  // One buffer table, as long as the longest call needs, filled before
  // each call.
  size_t table = 1;
  for (const auto* calls : {&loop.condition, &loop.body}) {
    for (const KernelCall& c : *calls) table = std::max(table, c.buffers.size());
  }
  b.SetInsertPoint(entry);
  llvm::Value* buffers = b.CreateAlloca(ptr, b.getInt64(static_cast<int64_t>(table)), "buffers");
  b.CreateBr(cond);

  auto address = [&](const BufferRef& r) -> llvm::Value* {
    if (r.allocation < 0) {
      return b.CreateIntToPtr(
          b.getInt64(static_cast<int64_t>(reinterpret_cast<uintptr_t>(r.address))), ptr);
    }
    llvm::Value* base = b.CreateLoad(
        ptr, b.CreateConstInBoundsGEP1_64(ptr, allocations, static_cast<uint64_t>(r.allocation)));
    return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), base, static_cast<uint64_t>(r.offset));
  };
  // hooks[h] is {fn, ctx}: fn(ctx, allocations).
  auto call_hook = [&](size_t h) -> llvm::Value* {
    llvm::Value* fn_at = b.CreateConstInBoundsGEP1_64(ptr, hooks, 2 * h);
    llvm::Value* ctx_at = b.CreateConstInBoundsGEP1_64(ptr, hooks, 2 * h + 1);
    llvm::Value* hook = b.CreateLoad(ptr, fn_at);
    return b.CreateCall(hook_type, hook, {b.CreateLoad(ptr, ctx_at), allocations});
  };
  auto calls = [&](const std::vector<KernelCall>& list) {
    for (const KernelCall& c : list) {
      if (c.host >= 0) {
        call_hook(static_cast<size_t>(c.host));
        continue;
      }
      std::vector<llvm::Value*> at;
      for (const BufferRef& r : c.buffers) at.push_back(address(r));
      for (const auto& [buffer, hook] : c.moved) {
        at.at(buffer) = b.CreateInBoundsGEP(b.getInt8Ty(), at.at(buffer), call_hook(hook));
      }
      for (size_t k = 0; k < c.buffers.size(); ++k) {
        b.CreateStore(at[k], b.CreateConstInBoundsGEP1_64(ptr, buffers, k));
      }
      llvm::FunctionCallee callee = module.getOrInsertFunction(kernels.at(c.graph), kernel_type);
      b.CreateCall(callee, {buffers, b.getInt64(0), b.getInt64(c.num_parallel), scratch});
    }
  };

  b.SetInsertPoint(cond);
  calls(loop.condition);
  llvm::Value* predicate = b.CreateLoad(b.getInt8Ty(), address(loop.predicate), "predicate");
  b.CreateCondBr(b.CreateICmpNE(predicate, b.getInt8(0)), body, exit);

  b.SetInsertPoint(body);
  calls(loop.body);
  b.CreateBr(cond);

  b.SetInsertPoint(exit);
  b.CreateRetVoid();
}

}  // namespace uir::codegen
