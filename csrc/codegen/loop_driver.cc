// A while loop as one LLVM function calling its kernels (LoopDriver).
#include <algorithm>
#include <cstddef>
#include <functional>

#include "codegen/emitter.h"
#include "codegen/kernel_compiler.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

using hlo::HloOpcode;
using igraph::IndexStep;

// A block program's offset in LLVM, step by step as igraph's Evaluate
// computes it: values held as i64, wrapped to each step's type.
class BlockOffsetEmitter {
 public:
  BlockOffsetEmitter(llvm::IRBuilder<>& b, std::function<llvm::Value*(const BufferRef&)> address)
      : b_(b), address_(std::move(address)) {}

  llvm::Value* Emit(const BlockProgram& p) {
    values_.clear();
    llvm::Value* offset = b_.getInt64(0);
    for (size_t k = 0; k < p.starts.size(); ++k) {
      const auto step = static_cast<size_t>(p.starts[k]);
      while (values_.size() <= step) values_.push_back(Step(p, p.steps[values_.size()]));
      llvm::Value* start = ClampStart(values_[step], p.steps[step].type, p.dims[k] - p.sizes[k]);
      offset = b_.CreateAdd(offset, b_.CreateMul(start, b_.getInt64(p.strides[k])));
    }
    return offset;
  }

 private:
  llvm::Value* Wrap(llvm::Value* v, PrimitiveType t) {
    if (t == PrimitiveType::kPred) return b_.CreateZExt(b_.CreateICmpNE(v, b_.getInt64(0)), i64());
    const int bits = BitWidth(t);
    if (bits >= 64) return v;
    llvm::Value* narrow = b_.CreateTrunc(v, b_.getIntNTy(static_cast<unsigned>(bits)));
    return IsSigned(t) ? b_.CreateSExt(narrow, i64()) : b_.CreateZExt(narrow, i64());
  }
  llvm::Value* Less(llvm::Value* a, llvm::Value* c, bool unsigned_) {
    return unsigned_ ? b_.CreateICmpULT(a, c) : b_.CreateICmpSLT(a, c);
  }
  // XLA's clamp of a start index to [0, limit] (a u64 above INT64_MAX: limit).
  llvm::Value* ClampStart(llvm::Value* v, PrimitiveType t, int64_t limit) {
    llvm::Value* hi = b_.getInt64(std::max<int64_t>(limit, 0));
    llvm::Value* zero = b_.getInt64(0);
    llvm::Value* low = b_.CreateSelect(b_.CreateICmpSLT(v, zero), zero, v);
    llvm::Value* clamped = b_.CreateSelect(b_.CreateICmpSGT(low, hi), hi, low);
    if (IsUnsigned(t)) return b_.CreateSelect(b_.CreateICmpSLT(v, zero), hi, clamped);
    return clamped;
  }
  llvm::Value* Step(const BlockProgram& p, const IndexStep& s) {
    auto v = [&](size_t i) { return values_.at(static_cast<size_t>(s.operands.at(i))); };
    auto type_of = [&](size_t i) { return p.steps.at(static_cast<size_t>(s.operands.at(i))).type; };
    const bool u = IsUnsigned(s.type);
    llvm::Value* r = nullptr;
    switch (s.kind) {
      case IndexStep::Kind::kInput: {
        const BufferRef& in = p.inputs.at(static_cast<size_t>(s.input));
        const int64_t bytes = StorageBytes(s.type);
        llvm::Value* at = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), address_(in),
                                                        static_cast<uint64_t>(s.element * bytes));
        llvm::Type* t = b_.getIntNTy(static_cast<unsigned>(8 * bytes));
        r = b_.CreateZExt(b_.CreateAlignedLoad(t, at, llvm::Align(1)), i64());
        break;
      }
      case IndexStep::Kind::kConstant:
        r = b_.getInt64(s.constant);
        break;
      case IndexStep::Kind::kUnary:
        switch (s.opcode) {
          case HloOpcode::kNegate:
            r = b_.CreateSub(b_.getInt64(0), v(0));
            break;
          case HloOpcode::kNot:
            r = s.type == PrimitiveType::kPred
                    ? b_.CreateZExt(b_.CreateICmpEQ(v(0), b_.getInt64(0)), i64())
                    : b_.CreateNot(v(0));
            break;
          case HloOpcode::kAbs:
            r = b_.CreateSelect(b_.CreateICmpSLT(v(0), b_.getInt64(0)),
                                b_.CreateSub(b_.getInt64(0), v(0)), v(0));
            break;
          default:
            r = v(0);
        }
        break;
      case IndexStep::Kind::kBinary: {
        llvm::Value* a = v(0);
        llvm::Value* c = v(1);
        switch (s.opcode) {
          case HloOpcode::kAdd:
            r = b_.CreateAdd(a, c);
            break;
          case HloOpcode::kSubtract:
            r = b_.CreateSub(a, c);
            break;
          case HloOpcode::kMultiply:
            r = b_.CreateMul(a, c);
            break;
          case HloOpcode::kMaximum:
            r = b_.CreateSelect(Less(a, c, u), c, a);
            break;
          case HloOpcode::kMinimum:
            r = b_.CreateSelect(Less(c, a, u), c, a);
            break;
          case HloOpcode::kAnd:
            r = b_.CreateAnd(a, c);
            break;
          case HloOpcode::kOr:
            r = b_.CreateOr(a, c);
            break;
          case HloOpcode::kDivide:
          case HloOpcode::kRemainder: {
            // XLA's: x / 0 = -1, x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0
            // (the divisor made safe before dividing).
            const bool divide = s.opcode == HloOpcode::kDivide;
            llvm::Value* zero = b_.CreateICmpEQ(c, b_.getInt64(0));
            llvm::Value* minus_one = b_.CreateICmpEQ(c, b_.getInt64(-1));
            llvm::Value* safe = b_.CreateSelect(b_.CreateOr(zero, u ? b_.getFalse() : minus_one),
                                                b_.getInt64(1), c);
            llvm::Value* q = divide ? (u ? b_.CreateUDiv(a, safe) : b_.CreateSDiv(a, safe))
                                    : (u ? b_.CreateURem(a, safe) : b_.CreateSRem(a, safe));
            if (!u) {
              q = b_.CreateSelect(minus_one,
                                  divide ? b_.CreateSub(b_.getInt64(0), a) : b_.getInt64(0), q);
            }
            r = b_.CreateSelect(zero, divide ? b_.getInt64(-1) : a, q);
            break;
          }
          default:
            r = b_.CreateXor(a, c);
        }
        break;
      }
      case IndexStep::Kind::kSelect:
        r = b_.CreateSelect(b_.CreateICmpNE(v(0), b_.getInt64(0)), v(1), v(2));
        break;
      case IndexStep::Kind::kClamp: {  // clamp(lo, x, hi) = min(max(x, lo), hi)
        llvm::Value* x = v(1);
        x = b_.CreateSelect(Less(x, v(0), u), v(0), x);
        r = b_.CreateSelect(Less(v(2), x, u), v(2), x);
        break;
      }
      case IndexStep::Kind::kCompare: {
        const bool cu = IsUnsigned(type_of(0));
        llvm::Value* a = v(0);
        llvm::Value* c = v(1);
        llvm::Value* bit = nullptr;
        switch (s.direction) {
          case hlo::ComparisonDirection::kEq:
            bit = b_.CreateICmpEQ(a, c);
            break;
          case hlo::ComparisonDirection::kNe:
            bit = b_.CreateICmpNE(a, c);
            break;
          case hlo::ComparisonDirection::kLt:
            bit = Less(a, c, cu);
            break;
          case hlo::ComparisonDirection::kLe:
            bit = b_.CreateNot(Less(c, a, cu));
            break;
          case hlo::ComparisonDirection::kGt:
            bit = Less(c, a, cu);
            break;
          case hlo::ComparisonDirection::kGe:
            bit = b_.CreateNot(Less(a, c, cu));
            break;
        }
        return b_.CreateZExt(bit, i64());  // a pred, not wrapped
      }
    }
    return Wrap(r, s.type);
  }
  llvm::Type* i64() { return b_.getInt64Ty(); }

  llvm::IRBuilder<>& b_;
  std::function<llvm::Value*(const BufferRef&)> address_;
  std::vector<llvm::Value*> values_;
};

}  // namespace

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
  llvm::FunctionType* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, ptr}, false);
  llvm::FunctionType* hook_type = llvm::FunctionType::get(i64, {ptr, ptr}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Argument* allocations = fn->getArg(0);
  llvm::Argument* scratch = fn->getArg(1);
  llvm::Argument* hooks = fn->getArg(2);
  llvm::Argument* constants = fn->getArg(3);
  allocations->setName("allocations");
  scratch->setName("scratch");
  hooks->setName("hooks");
  constants->setName("constants");

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
      const auto at = std::find(loop.constants.begin(), loop.constants.end(), r.address);
      UIR_CHECK(at != loop.constants.end()) << "loop " << name << ": a constant not in its table";
      return b.CreateLoad(
          ptr, b.CreateConstInBoundsGEP1_64(ptr, constants,
                                            static_cast<uint64_t>(at - loop.constants.begin())));
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
  BlockOffsetEmitter offsets(b, address);
  auto calls = [&](const std::vector<KernelCall>& list) {
    for (const KernelCall& c : list) {
      if (c.host >= 0) {
        call_hook(static_cast<size_t>(c.host));
        continue;
      }
      if (c.copy) {
        const BlockCopy& copy = *c.copy;
        llvm::Value* whole =
            b.CreateInBoundsGEP(b.getInt8Ty(), address(copy.whole), offsets.Emit(*copy.program));
        llvm::Value* block = address(copy.block);
        b.CreateMemMove(copy.into_whole ? whole : block, llvm::MaybeAlign(1),
                        copy.into_whole ? block : whole, llvm::MaybeAlign(1),
                        b.getInt64(copy.bytes));
        continue;
      }
      std::vector<llvm::Value*> at;
      for (const BufferRef& r : c.buffers) at.push_back(address(r));
      for (const MovedBuffer& m : c.moved) {
        llvm::Value* offset = m.program ? offsets.Emit(*m.program) : call_hook(m.hook);
        at.at(m.buffer) = b.CreateInBoundsGEP(b.getInt8Ty(), at.at(m.buffer), offset);
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
