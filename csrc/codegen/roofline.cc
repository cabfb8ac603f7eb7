// The triad in C++ over the thread pool, the FMA loop as LLVM IR.
#include "codegen/roofline.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

#include "codegen/host.h"
#include "codegen/jit_impl.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::codegen {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Free {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, Free>;

// aligned_alloc takes sizes in multiples of the alignment (8 floats of an
// AVX2 accumulator are half a line).
Buffer Allocate(int64_t n) {
  const size_t bytes = (static_cast<size_t>(n) * 4 + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(p);
}

constexpr int kChains = 12;  // independent accumulators: enough to cover FMA latency

// void fma_loop(float* out, int64 iterations): kChains vector accumulators,
// each acc = fma(acc, m, c) per iteration; their sum is stored so the loop
// stays.
using FmaFn = void (*)(float*, int64_t);

int VectorLanes() {
  const auto& f = GetHostInfo().features;
  auto has = [&](const char* name) { return std::find(f.begin(), f.end(), name) != f.end(); };
  if (has("avx512f")) return 16;
  if (has("avx2") || has("avx")) return 8;
  return 4;
}

}  // namespace

double StreamTriadGBs(int64_t elements, int repeats) {
  Buffer a = Allocate(elements), b = Allocate(elements), c = Allocate(elements);
  float* pa = a.get();
  float* pb = b.get();
  float* pc = c.get();
  const int64_t grain = std::max<int64_t>(1 << 16, elements / (4 * NumThreads()));
  // First touch on the workers, as the triad will touch the pages.
  ParallelFor(elements, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      pa[i] = 0.0f;
      pb[i] = 1.0f;
      pc[i] = 2.0f;
    }
  });
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const double start = Now();
    ParallelFor(elements, grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) pa[i] = pb[i] + 3.0f * pc[i];
    });
    const double seconds = Now() - start;
    best = std::max(best, 12.0 * static_cast<double>(elements) / seconds / 1e9);
  }
  UIR_CHECK(pa[elements / 2] == 7.0f) << "the triad did not run";
  return best;
}

double FmaPeakGflops(int repeats) {
  const int lanes = VectorLanes();
  Jit jit;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("uir_roofline", *context);
  llvm::IRBuilder<> b(*context);
  llvm::Type* vec = llvm::FixedVectorType::get(b.getFloatTy(), static_cast<unsigned>(lanes));
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getInt64Ty()}, false),
      llvm::Function::ExternalLinkage, "uir_fma_loop", *module);
  // Parts that prefer 256-bit vectors would otherwise split 512-bit ones.
  const std::string bits = std::to_string(lanes * 32);
  fn->addFnAttr("prefer-vector-width", bits);
  fn->addFnAttr("min-legal-vector-width", bits);
  auto* entry = llvm::BasicBlock::Create(*context, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(*context, "loop", fn);
  auto* exit = llvm::BasicBlock::Create(*context, "exit", fn);
  b.SetInsertPoint(entry);
  llvm::Value* m = llvm::ConstantFP::get(vec, 0.999999);
  llvm::Value* add = llvm::ConstantFP::get(vec, 1e-7);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  std::vector<llvm::PHINode*> acc;
  std::vector<llvm::Value*> next;
  for (int k = 0; k < kChains; ++k) {
    acc.push_back(b.CreatePHI(vec, 2));
    acc.back()->addIncoming(llvm::ConstantFP::get(vec, 1.0 + k), entry);
  }
  for (int k = 0; k < kChains; ++k) {
    next.push_back(b.CreateIntrinsic(llvm::Intrinsic::fma, {vec}, {acc[k], m, add}));
  }
  llvm::Value* i_next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(i_next, loop);
  for (int k = 0; k < kChains; ++k) acc[k]->addIncoming(next[k], loop);
  b.CreateCondBr(b.CreateICmpSLT(i_next, fn->getArg(1)), loop, exit);
  b.SetInsertPoint(exit);
  llvm::Value* sum = next[0];
  for (int k = 1; k < kChains; ++k) sum = b.CreateFAdd(sum, next[k]);
  b.CreateStore(sum, fn->getArg(0));
  b.CreateRetVoid();
  AddModule(jit, std::move(module), std::move(context), /*keep_ir=*/false);
  auto kernel = reinterpret_cast<FmaFn>(jit.Lookup("uir_fma_loop"));

  const int threads = NumThreads();
  constexpr int64_t kIterations = 20'000'000;
  std::vector<Buffer> out;
  for (int t = 0; t < threads; ++t) out.push_back(Allocate(lanes));
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const double start = Now();
    ParallelFor(threads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) kernel(out[t].get(), kIterations);
    });
    const double seconds = Now() - start;
    const double flops = 2.0 * kChains * lanes * static_cast<double>(kIterations) * threads;
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

}  // namespace uir::codegen
