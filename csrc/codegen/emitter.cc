// Emits a planned iGraph as one LLVM function: a loop over parallel ids,
// in it the prologue, the loop over loop ids with the body, and the
// epilogue. It carries out the iGraph's plan (kernel_plan.h) and decides
// nothing of its own: in the loops form each iOp is a loop nest over its
// slice's rows and columns (rows innermost, or block transposes, where the
// plan says), in the rows form each row runs through the plan's column
// loops, in the coalesced form a range of parallel ids is one column loop;
// prefetches go where the plan puts them. The loop vectorizer turns the
// inner loops into vector code. reg and sram iPointers live in the
// caller's scratch, dram ones in the buffers.
//
// Over 1,000 lines, kept in one file on purpose: it is one class whose
// state (the builder, the iPointer bases, the index values, the row
// sources) every part reads, and splitting it would mean a header that exposes all
// of that state to no other user. The scalar arithmetic (Unary, Binary,
// Compare, Convert) is the part to move out, into its own class, when a
// second emitter needs it.
#include "codegen/emitter.h"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "codegen/math.h"
#include "codegen/narrow_storage.h"
#include "hlo/reduction_kind.h"
#include "igraph/kernel_plan.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::codegen {
namespace {

using hlo::HloOpcode;
using igraph::Affine;
using igraph::Axis;
using igraph::IGraph;
using igraph::IOp;
using igraph::ISlice;
using igraph::Level;
using igraph::OpKind;
using igraph::Section;

[[noreturn]] void Refuse(const std::string& what) { throw UnimplementedError(what); }

class KernelEmitter {
 public:
  KernelEmitter(const IGraph& g, llvm::Module& m) : g_(g), m_(m), ctx_(m.getContext()), b_(ctx_) {}

  void Emit(const std::string& name, const DramAliasing* aliasing, const std::vector<bool>* aligned,
            llvm::GlobalVariable* timer) {
    aliasing_ = aliasing;
    aligned_ = aligned;
    timer_ = timer;
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, i64, i64, ptr}, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m_);
    try {
      Body();
    } catch (...) {
      fn_->eraseFromParent();
      throw;
    }
  }

  // Alias scopes for the dram iPointers `disjoint` marks: each access
  // through one (or through one at its address) is in its scope and in
  // none of the others'.
  void AddAliasScopes(const std::vector<bool>& disjoint) {
    llvm::MDBuilder md(ctx_);
    llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("uir.dram");
    std::map<const llvm::Value*, size_t> base_of;
    std::vector<llvm::MDNode*> scopes(bases_.size(), nullptr);
    for (size_t p = 0; p < bases_.size() && p < disjoint.size(); ++p) {
      if (!disjoint[p] || g_.pointers()[p].level != Level::kDram) continue;
      if (base_of.count(bases_[p]) != 0) continue;  // at the address of one before
      scopes[p] = md.createAnonymousAliasScope(domain, g_.pointers()[p].name);
      base_of[bases_[p]] = p;
    }
    if (base_of.empty()) return;
    for (llvm::BasicBlock& block : *fn_) {
      for (llvm::Instruction& inst : block) {
        llvm::Value* address = nullptr;
        if (auto* load = llvm::dyn_cast<llvm::LoadInst>(&inst)) address = load->getPointerOperand();
        if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst))
          address = store->getPointerOperand();
        if (address == nullptr) continue;
        auto it = base_of.find(llvm::getUnderlyingObject(address, 0));
        if (it == base_of.end()) continue;
        std::vector<llvm::Metadata*> others;
        for (size_t q = 0; q < scopes.size(); ++q) {
          if (scopes[q] != nullptr && q != it->second) others.push_back(scopes[q]);
        }
        inst.setMetadata(llvm::LLVMContext::MD_alias_scope,
                         llvm::MDNode::get(ctx_, {scopes[it->second]}));
        if (!others.empty()) {
          inst.setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(ctx_, others));
        }
      }
    }
  }

 private:
  // --- Types -----------------------------------------------------------------
  llvm::Type* StorageType(PrimitiveType t) {
    switch (t) {
      case PrimitiveType::kPred:
      case PrimitiveType::kS8:
      case PrimitiveType::kU8:
        return b_.getInt8Ty();
      case PrimitiveType::kS1:
      case PrimitiveType::kS2:
      case PrimitiveType::kS4:
      case PrimitiveType::kU1:
      case PrimitiveType::kU2:
      case PrimitiveType::kU4:
        return b_.getInt8Ty();  // one per byte, in its low bits
      case PrimitiveType::kF8E5M2:
      case PrimitiveType::kF8E4M3:
      case PrimitiveType::kF8E4M3FN:
      case PrimitiveType::kF8E4M3B11FNUZ:
      case PrimitiveType::kF8E3M4:
      case PrimitiveType::kF8E5M2FNUZ:
      case PrimitiveType::kF8E4M3FNUZ:
      case PrimitiveType::kF6E3M2FN:
      case PrimitiveType::kF6E2M3FN:
      case PrimitiveType::kF4E2M1FN:
        return b_.getInt8Ty();  // one per byte, in its low bits
      case PrimitiveType::kS16:
      case PrimitiveType::kU16:
      case PrimitiveType::kBF16:
        return b_.getInt16Ty();
      case PrimitiveType::kS32:
      case PrimitiveType::kU32:
        return b_.getInt32Ty();
      case PrimitiveType::kS64:
      case PrimitiveType::kU64:
        return b_.getInt64Ty();
      case PrimitiveType::kF16:
        return b_.getHalfTy();
      case PrimitiveType::kF32:
        return b_.getFloatTy();
      case PrimitiveType::kF64:
        return b_.getDoubleTy();
      default:
        Refuse("no machine form for " + std::string(PrimitiveTypeName(t)));
    }
  }
  // The type arithmetic happens in: narrow floats widen to float, pred is i1.
  llvm::Type* ComputeType(PrimitiveType t) {
    if (t == PrimitiveType::kPred) return b_.getInt1Ty();
    if (IsSubByteInteger(t)) return b_.getIntNTy(static_cast<unsigned>(BitWidth(t)));
    if (IsNarrowFloat(t)) return b_.getFloatTy();
    return StorageType(t);
  }
  static bool IsSubByteInteger(PrimitiveType t) { return IsInteger(t) && BitWidth(t) < 8; }

  llvm::Value* FromStorage(PrimitiveType t, llvm::Value* raw) {
    // A sub-byte integer is its byte's low bits (the upper ones ignored).
    if (IsSubByteInteger(t)) return b_.CreateTrunc(raw, ComputeType(t));
    if (IsByteFloat(t)) return EmitDecodeByteFloat(b_, t, raw);
    switch (t) {
      case PrimitiveType::kPred:
        return b_.CreateICmpNE(raw, b_.getInt8(0));
      case PrimitiveType::kF16:
        return b_.CreateFPExt(raw, b_.getFloatTy());
      case PrimitiveType::kBF16:
        return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(raw, b_.getInt32Ty()), 16),
                                b_.getFloatTy());
      default:
        return raw;
    }
  }
  llvm::Value* ToStorage(PrimitiveType t, llvm::Value* v) {
    // Written as NumPy's int4/uint4 hold them: the low bits, zeros above.
    if (IsSubByteInteger(t)) return b_.CreateZExt(v, b_.getInt8Ty());
    if (IsByteFloat(t)) return b_.CreateTrunc(EmitEncodeByteFloat(b_, t, v), b_.getInt8Ty());
    switch (t) {
      case PrimitiveType::kPred:
        return b_.CreateZExt(v, b_.getInt8Ty());
      case PrimitiveType::kF16:
        return b_.CreateFPTrunc(v, b_.getHalfTy());
      case PrimitiveType::kBF16: {
        // Round to nearest even; NaN stays a (quiet) NaN.
        llvm::Value* bits = b_.CreateBitCast(v, b_.getInt32Ty());
        llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
        llvm::Value* rounded =
            b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
        llvm::Value* nan = b_.CreateOr(b_.CreateLShr(bits, 16), b_.getInt32(0x40));
        return b_.CreateTrunc(b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded),
                              b_.getInt16Ty());
      }
      default:
        return v;
    }
  }
  llvm::Value* Load(PrimitiveType t, llvm::Value* address) {
    return FromStorage(t, b_.CreateLoad(StorageType(t), address));
  }
  void Store(PrimitiveType t, llvm::Value* v, llvm::Value* address) {
    b_.CreateStore(ToStorage(t, v), address);
  }
  // A scalar literal as a value of `t`'s compute type.
  llvm::Value* Constant(const hlo::Literal& literal, PrimitiveType t) {
    const PrimitiveType lt = literal.shape().element_type();
    const int bytes = StorageBytes(lt);
    uint64_t raw = 0;
    std::memcpy(&raw, literal.bytes().data(), static_cast<size_t>(bytes));
    llvm::Type* storage = StorageType(lt);
    llvm::Value* bits = llvm::ConstantInt::get(b_.getIntNTy(bytes * 8), raw);
    llvm::Value* v =
        FromStorage(lt, storage->isIntegerTy() ? bits : b_.CreateBitCast(bits, storage));
    return lt == t ? v : Convert(lt, t, v);
  }

  // --- Structure -------------------------------------------------------------
  // A counted loop [0, n) whose body gets the induction variable.
  void Loop(int64_t n, const std::function<void(llvm::Value*)>& body) {
    if (n <= 0) return;
    if (n == 1) {
      body(b_.getInt64(0));
      return;
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "loop.exit", fn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
    i->addIncoming(b_.getInt64(0), pre);
    const int64_t loops_before = loops_;
    body(i);
    ++loops_;
    llvm::Value* next = b_.CreateNUWAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt64(n)), loop, exit);
    // Loops around other loops stay loops: unrolling them copies the
    // vectorized inner loops and costs compile time for no speed.
    if (loops_ > loops_before + 1) NoUnroll(back);
    b_.SetInsertPoint(exit);
  }
  void NoUnroll(llvm::BranchInst* back) {
    llvm::MDNode* disable =
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")});
    llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, {nullptr, disable});
    id->replaceOperandWith(0, id);
    back->setMetadata(llvm::LLVMContext::MD_loop, id);
  }
  // A loop [from, n) carrying one value: body(i, acc) returns the next acc.
  llvm::Value* FoldLoop(int64_t from, int64_t n, llvm::Value* init,
                        const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& body) {
    if (from >= n) return init;
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "fold", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "fold.exit", fn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "j");
    llvm::PHINode* acc = b_.CreatePHI(init->getType(), 2, "acc");
    i->addIncoming(b_.getInt64(from), pre);
    acc->addIncoming(init, pre);
    llvm::Value* next_acc = body(i, acc);
    ++loops_;
    llvm::Value* next = b_.CreateNUWAdd(i, b_.getInt64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    acc->addIncoming(next_acc, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt64(n)), loop, exit);
    b_.SetInsertPoint(exit);
    return next_acc;
  }

  llvm::Value* AffineValue(const Affine& a) {
    llvm::Value* v = b_.getInt64(a.constant);
    for (const auto& [var, c] : a.terms) {
      v = b_.CreateAdd(v, b_.CreateMul(vars_.at(static_cast<size_t>(var)), b_.getInt64(c)));
    }
    return v;
  }
  // Element (0, 0) of slice `s` at the current index values.
  llvm::Value* SliceBase(int s) {
    const ISlice& slice = g_.slices()[s];
    const PrimitiveType t = g_.pointers()[slice.pointer].dtype;
    return b_.CreateInBoundsGEP(StorageType(t), bases_[slice.pointer], AffineValue(slice.offset));
  }
  llvm::Value* Element(int s, llvm::Value* base, llvm::Value* i, llvm::Value* j) {
    const ISlice& slice = g_.slices()[s];
    const PrimitiveType t = g_.pointers()[slice.pointer].dtype;
    llvm::Value* at = b_.CreateAdd(b_.CreateMul(i, b_.getInt64(slice.stride[0])),
                                   b_.CreateMul(j, b_.getInt64(slice.stride[1])));
    return b_.CreateInBoundsGEP(StorageType(t), base, at);
  }
  PrimitiveType TypeOf(int s) const { return g_.PointerOf(s).dtype; }

  void Body() {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry);
    llvm::Argument* buffers = fn_->getArg(0);
    llvm::Argument* begin = fn_->getArg(1);
    llvm::Argument* end = fn_->getArg(2);
    llvm::Argument* scratch = fn_->getArg(3);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    fn_->addParamAttr(0, llvm::Attribute::NoAlias);
    fn_->addParamAttr(0, llvm::Attribute::ReadOnly);
    fn_->addParamAttr(3, llvm::Attribute::NoAlias);
    fn_->addParamAttr(3, llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    // Base addresses: dram from the buffers array, the rest from scratch.
    int dram = 0;
    int64_t local = 0;
    llvm::MDNode* empty = llvm::MDNode::get(ctx_, {});
    for (const igraph::IPointer& p : g_.pointers()) {
      StorageType(p.dtype);  // refuses types without a machine form
      if (p.level == Level::kDram) {
        auto* load = b_.CreateLoad(b_.getPtrTy(),
                                   b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), buffers, dram++));
        load->setMetadata(llvm::LLVMContext::MD_invariant_load, empty);
        load->setMetadata(llvm::LLVMContext::MD_nonnull, empty);
        const size_t index = bases_.size();
        if (aligned_ != nullptr && index < aligned_->size() && (*aligned_)[index]) {
          load->setMetadata(
              llvm::LLVMContext::MD_align,
              llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt64(64))}));
        }
        const int first = aliasing_ != nullptr && index < aliasing_->same_as.size()
                              ? aliasing_->same_as[index]
                              : static_cast<int>(index);
        // At the address of an earlier iPointer: through its base.
        bases_.push_back(first >= 0 && static_cast<size_t>(first) < index
                             ? bases_[static_cast<size_t>(first)]
                             : load);
      } else {
        bases_.push_back(b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch, local));
        const int64_t bytes = p.size * StorageBytes(p.dtype);
        local += (bytes + 63) / 64 * 64;
      }
    }
    vars_.assign(g_.vars().size(), b_.getInt64(0));
    const igraph::KernelPlan& plan = g_.plan();
    const bool row_form =
        plan.form == igraph::BodyForm::kRows || plan.form == igraph::BodyForm::kCoalesced;
    if (row_form) {
      row_buffers_ = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), scratch, local);
      source_ = igraph::AnalyseRows(g_).source;
    }

    if (plan.form == igraph::BodyForm::kCoalesced) {
      // Consecutive parallel ids cover consecutive elements: one column
      // loop over all of them, [begin * W, end * W).
      const int64_t w = plan.loops[0];
      auto* run = llvm::BasicBlock::Create(ctx_, "coalesced", fn_);
      auto* done = llvm::BasicBlock::Create(ctx_, "exit", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(begin, end), run, done);
      b_.SetInsertPoint(run);
      const std::vector<IOp>& ops = g_.ops(Section::kBody);
      llvm::Value* started = StartTimer();
      EmitColumnLoop(ops, 0, ops.size(), b_.getInt64(0), b_.CreateMul(begin, b_.getInt64(w)),
                     b_.CreateMul(end, b_.getInt64(w)));
      StopTimer(started, b_.CreateSub(end, begin));
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
      b_.CreateRet(b_.getInt32(0));
      return;
    }
    auto* ploop = llvm::BasicBlock::Create(ctx_, "parallel", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), ploop, exit);
    b_.SetInsertPoint(ploop);
    llvm::PHINode* pid = b_.CreatePHI(b_.getInt64Ty(), 2, "pid");
    pid->addIncoming(begin, entry);
    SetDigits(pid, /*parallel=*/true);
    EmitSection(Section::kPrologue);
    llvm::Value* started = StartTimer();
    if (row_form) {
      EmitRows();  // one loop id, no prologue or epilogue
    } else {
      Loop(g_.num_loop(), [&](llvm::Value* lid) {
        SetDigits(lid, /*parallel=*/false);
        EmitSection(Section::kBody);
      });
    }
    StopTimer(started, b_.getInt64(1));
    EmitSection(Section::kEpilogue);
    llvm::Value* next = b_.CreateNSWAdd(pid, b_.getInt64(1));
    pid->addIncoming(next, b_.GetInsertBlock());
    NoUnroll(b_.CreateCondBr(b_.CreateICmpSLT(next, end), ploop, exit));
    b_.SetInsertPoint(exit);
    b_.CreateRet(b_.getInt32(0));
  }

  // The index variables of one kind from their mixed-radix number `id`.
  void SetDigits(llvm::Value* id, bool parallel) {
    llvm::Value* rest = id;
    for (int v = static_cast<int>(g_.vars().size()) - 1; v >= 0; --v) {
      const igraph::IndexVar& var = g_.vars()[v];
      if (var.parallel != parallel) continue;
      if (var.extent == 1) {
        vars_[v] = b_.getInt64(0);
        continue;
      }
      vars_[v] = b_.CreateURem(rest, b_.getInt64(var.extent));
      rest = b_.CreateUDiv(rest, b_.getInt64(var.extent));
    }
  }

  // --- Row by row (the plan's rows and coalesced forms) ----------------------
  static int LoopOf(const IOp& op) { return op.plan.loop; }

  void EmitRows() {
    const std::vector<IOp>& ops = g_.ops(Section::kBody);
    Loop(g_.plan().rows, [&](llvm::Value* i) {
      // Slice bases at the current index values, once per row.
      size_t k = 0;
      while (k < ops.size()) {
        if (LoopOf(ops[k]) < 0) {  // a sync or identity
          ++k;
          continue;
        }
        size_t end = k;
        while (end < ops.size() && (LoopOf(ops[end]) < 0 || LoopOf(ops[end]) == LoopOf(ops[k]))) {
          ++end;
        }
        EmitColumnLoop(ops, k, end, i);
        k = end;
      }
    });
  }

  // Element (i, j) of a dram slice.
  llvm::Value* DramElement(int s, llvm::Value* i, llvm::Value* j) {
    return Element(s, SliceBase(s), i, j);
  }
  // Element j of iOp op's row buffer.
  llvm::Value* RowBuffer(const IOp& op, llvm::Value* j) {
    const PrimitiveType t = TypeOf(op.outputs[0]);
    llvm::Value* base =
        b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), row_buffers_, op.plan.row_buffer);
    return b_.CreateInBoundsGEP(StorageType(t), base, j);
  }
  bool IsDram(int slice) const { return g_.PointerOf(slice).level == Level::kDram; }
  // A value of `t` as its storage would round it (narrow floats).
  llvm::Value* Rounded(PrimitiveType t, llvm::Value* v) {
    return IsNarrowFloat(t) ? FromStorage(t, ToStorage(t, v)) : v;
  }

  // The start value of a reduction by `function` on `t`.
  llvm::Value* ReduceIdentity(igraph::Fn fn, PrimitiveType t) {
    llvm::Type* ct = ComputeType(t);
    // Floats compute wider than narrow storage: their identity in f64.
    const std::optional<hlo::ReductionKind> kind = hlo::ReductionKindOf(igraph::FnOpcode(fn));
    const std::optional<hlo::Literal> id =
        kind ? hlo::ReductionIdentity(*kind, IsFloat(t) ? PrimitiveType::kF64 : t) : std::nullopt;
    if (!id)
      Refuse("reduce." + std::string(igraph::FnName(fn)) + " on " +
             std::string(PrimitiveTypeName(t)));
    if (t == PrimitiveType::kPred) return b_.getInt1(id->GetInt64(0) != 0);
    if (IsFloat(t)) return llvm::ConstantFP::get(ct, id->GetDouble(0));
    return IsSigned(t) ? llvm::ConstantInt::getSigned(ct, id->GetInt64(0))
                       : llvm::ConstantInt::get(ct, id->GetUint64(0));
  }

  // iOps [first, end) of one column loop, for row i: values pass between
  // them in registers; reductions accumulate in loop-carried values.
  void EmitColumnLoop(const std::vector<IOp>& ops, size_t first, size_t end, llvm::Value* i,
                      llvm::Value* j_begin = nullptr, llvm::Value* j_end = nullptr) {
    const bool ranged = j_begin != nullptr;
    // Ranged (coalesced): a real loop whatever its width.
    const int64_t width = ranged ? 2 : g_.plan().loops[LoopOf(ops[first])];
    // Broadcast inputs come from earlier loops: load them before this one.
    std::map<size_t, llvm::Value*> hoisted;
    std::vector<size_t> reduces;
    for (size_t k = first; k < end; ++k) {
      const IOp& op = ops[k];
      if (op.kind == OpKind::kBroadcast) hoisted[k] = LoadInput(ops, k, 0, i, b_.getInt64(0), {});
      if (op.kind == OpKind::kReduce) reduces.push_back(k);
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    llvm::BasicBlock* loop = nullptr;
    llvm::PHINode* j = nullptr;
    std::map<size_t, llvm::PHINode*> acc;
    if (width > 1) {
      loop = llvm::BasicBlock::Create(ctx_, "columns", fn_);
      b_.CreateBr(loop);
      b_.SetInsertPoint(loop);
      j = b_.CreatePHI(b_.getInt64Ty(), 2, "j");
      j->addIncoming(ranged ? j_begin : b_.getInt64(0), pre);
      for (size_t k : reduces) {
        const PrimitiveType t = TypeOf(ops[k].inputs[0]);
        acc[k] = b_.CreatePHI(ComputeType(t), 2, "acc");
        acc[k]->addIncoming(ReduceIdentity(ops[k].fn, t), pre);
      }
    }
    llvm::Value* jv = j != nullptr ? static_cast<llvm::Value*>(j) : b_.getInt64(0);
    std::map<size_t, llvm::Value*> value;  // this column's value of each iOp
    std::map<size_t, llvm::Value*> next_acc;
    for (size_t k = first; k < end; ++k) {
      const IOp& op = ops[k];
      if (LoopOf(op) < 0) continue;
      const int out = op.outputs[0];
      const PrimitiveType t = TypeOf(out);
      if (op.kind == OpKind::kReduce) {
        const PrimitiveType it = TypeOf(op.inputs[0]);
        llvm::Value* x = LoadInput(ops, k, 0, i, jv, value);
        llvm::Value* start =
            width > 1 ? static_cast<llvm::Value*>(acc[k]) : ReduceIdentity(op.fn, it);
        next_acc[k] = Rounded(it, Reassociable(igraph::FnOpcode(op.fn), it, start, x));
        continue;
      }
      llvm::Value* v;
      if (op.kind == OpKind::kBroadcast) {
        v = hoisted[k];
      } else if (op.kind == OpKind::kMove) {
        v = LoadInput(ops, k, 0, i, jv, value);
      } else {
        std::vector<llvm::Value*> x;
        for (size_t n = 0; n < op.inputs.size(); ++n)
          x.push_back(LoadInput(ops, k, n, i, jv, value));
        v = Rounded(t, Compute(op, x, i, jv));
      }
      value[k] = v;
      if (IsDram(out)) {
        Store(t, v, DramElement(out, i, jv));
      } else if (op.plan.row_buffer >= 0) {
        Store(t, v, RowBuffer(op, jv));
      }
    }
    if (width > 1) {
      PrefetchAhead(ops, first, end, i, jv);
      llvm::Value* next = b_.CreateNUWAdd(j, b_.getInt64(1));
      j->addIncoming(next, b_.GetInsertBlock());
      for (size_t k : reduces) acc[k]->addIncoming(next_acc[k], b_.GetInsertBlock());
      auto* exit = llvm::BasicBlock::Create(ctx_, "columns.exit", fn_);
      b_.CreateCondBr(b_.CreateICmpULT(next, ranged ? j_end : b_.getInt64(width)), loop, exit);
      b_.SetInsertPoint(exit);
      ++loops_;
    }
    // Reductions are complete after the loop.
    for (size_t k : reduces) {
      const IOp& op = ops[k];
      const int out = op.outputs[0];
      const PrimitiveType t = TypeOf(out);
      if (IsDram(out)) {
        Store(t, next_acc[k], DramElement(out, i, b_.getInt64(0)));
      } else if (op.plan.row_buffer >= 0) {
        Store(t, next_acc[k], RowBuffer(op, b_.getInt64(0)));
      }
    }
  }

  // The prefetches the plan gives the iOps of one column loop (for row i,
  // at column j): the element `rows` rows down, `bytes` bytes ahead, one
  // prefetch per vector (EmitPrefetch). Addresses past a buffer's end are
  // harmless: prefetches do not fault. Compiled without prefetches
  // (UsesPrefetch false), none.
  void PrefetchAhead(const std::vector<IOp>& ops, size_t first, size_t end, llvm::Value* i,
                     llvm::Value* j) {
    if (!UsesPrefetch(m_)) return;
    for (size_t k = first; k < end; ++k) {
      for (const igraph::Prefetch& f : ops[k].plan.prefetch) {
        const ISlice& sl = g_.slices()[f.slice];
        const PrimitiveType t = TypeOf(f.slice);
        llvm::Value* row = b_.CreateAdd(i, b_.getInt64(f.rows));
        llvm::Value* at = b_.CreateAdd(b_.CreateMul(row, b_.getInt64(sl.stride[0])), j);
        llvm::Value* p = b_.CreateGEP(StorageType(t), SliceBase(f.slice), at);
        EmitPrefetch(b_, p, BitWidth(t) / 8, f.bytes);
      }
    }
  }

  // Input n of iOp k at column j of row i: from a value of this loop, the
  // writer's row buffer, or dram.
  llvm::Value* LoadInput(const std::vector<IOp>& ops, size_t k, size_t n, llvm::Value* i,
                         llvm::Value* j, const std::map<size_t, llvm::Value*>& value) {
    const int slice = ops[k].inputs[n];
    const PrimitiveType t = TypeOf(slice);
    const int src = source_[k][n];
    if (src < 0) return Load(t, DramElement(slice, i, j));
    auto it = value.find(static_cast<size_t>(src));
    if (it != value.end()) return it->second;
    const IOp& writer = ops[static_cast<size_t>(src)];
    if (writer.plan.reread) return Load(t, DramElement(writer.inputs[0], i, j));
    UIR_CHECK(writer.plan.row_buffer >= 0)
        << "iOp " << k << " reads iOp " << src << " with no row buffer";
    return Load(t, RowBuffer(writer, j));
  }

  void EmitSection(Section s) {
    for (const IOp& op : g_.ops(s)) EmitOp(op);
  }

  // --- iOps ------------------------------------------------------------------
  void EmitOp(const IOp& op) {
    switch (op.kind) {
      case OpKind::kSync:
        if (op.to == Level::kDram) Refuse("a sync across every unit (dram scope)");
        return;  // a group is one thread on a CPU
      case OpKind::kIdentity:
        return;
      case OpKind::kBroadcast:
      case OpKind::kReduce:
        if (op.scope == igraph::Scope::kGroup && op.group_size > 1) {
          Refuse("a group-scope " + std::string(OpKindName(op.kind)) + " over " +
                 std::to_string(op.group_size) + " units");
        }
        CheckNoOverlap(op);
        if (op.kind == OpKind::kBroadcast) {
          EmitBroadcast(op);
        } else {
          EmitReduce(op);
        }
        return;
      default:
        EmitElementwise(op);
        return;
    }
  }

  void CheckNoOverlap(const IOp& op) {
    const ISlice& out = g_.slices()[op.outputs[0]];
    for (int in : op.inputs) {
      if (g_.slices()[in].pointer == out.pointer) {
        Refuse("a " + std::string(OpKindName(op.kind)) + " that writes the iPointer it reads");
      }
    }
  }

  void EmitElementwise(const IOp& op) {
    const int out = op.outputs[0];
    const ISlice& os = g_.slices()[out];
    llvm::Value* out_base = SliceBase(out);
    std::vector<llvm::Value*> in_bases;
    for (int in : op.inputs) in_bases.push_back(SliceBase(in));
    // An input sharing the output's iPointer at another place would be
    // overwritten before it is read; the interpreter reads first.
    for (int in : op.inputs) {
      const ISlice& is = g_.slices()[in];
      if (is.pointer == os.pointer && !(is.offset == os.offset && is.stride == os.stride)) {
        Refuse("an iOp whose output overlaps its input at another place");
      }
    }
    // The plan's order and block transposes (a move reading down its
    // columns loops over rows innermost, so its reads are contiguous).
    const bool by_columns = op.plan.by_columns;
    if (op.plan.block != 0) {
      EmitBlockTranspose(op, op.plan.block);
      return;
    }
    auto nest = [&](const std::function<void(llvm::Value*, llvm::Value*)>& body) {
      if (by_columns) {
        Loop(os.shape[1],
             [&](llvm::Value* j) { Loop(os.shape[0], [&](llvm::Value* i) { body(i, j); }); });
      } else {
        Loop(os.shape[0],
             [&](llvm::Value* i) { Loop(os.shape[1], [&](llvm::Value* j) { body(i, j); }); });
      }
    };
    nest([&](llvm::Value* i, llvm::Value* j) {
      {
        std::vector<llvm::Value*> x;
        if (op.kind == OpKind::kMove) {
          // Bytes as they are: no conversion through the compute type.
          llvm::Type* st = StorageType(TypeOf(op.inputs[0]));
          b_.CreateStore(b_.CreateLoad(st, Element(op.inputs[0], in_bases[0], i, j)),
                         Element(out, out_base, i, j));
          return;
        }
        for (size_t k = 0; k < op.inputs.size(); ++k) {
          x.push_back(Load(TypeOf(op.inputs[k]), Element(op.inputs[k], in_bases[k], i, j)));
        }
        Store(TypeOf(out), Compute(op, x, i, j), Element(out, out_base, i, j));
      }
    });
  }

  // A transposing move in w x w blocks of w-element vectors: w loads down
  // the input's columns (each contiguous), a transpose in registers, w
  // stores along the output's rows. The transpose is log2(w) rounds of
  // two-input shuffles over pairs of rows; round h swaps bit h of the row
  // index with bit h of the column index. Rows and columns past the last
  // whole block are copied element by element. The verifier has checked
  // that the slices fit (kernel_plan.h).
  void EmitBlockTranspose(const IOp& op, int64_t w) {
    const int out = op.outputs[0], in = op.inputs[0];
    const ISlice& os = g_.slices()[out];
    const PrimitiveType t = TypeOf(in);
    const int64_t bytes = StorageBytes(t);
    const int64_t rows_in_blocks = os.shape[0] / w * w, cols_in_blocks = os.shape[1] / w * w;
    llvm::Type* st = StorageType(t);
    auto* vt = llvm::FixedVectorType::get(st, static_cast<unsigned>(w));
    const llvm::Align align(static_cast<uint64_t>(bytes));
    llvm::Value* out_base = SliceBase(out);
    llvm::Value* in_base = SliceBase(in);
    Loop(os.shape[1] / w, [&](llvm::Value* jb) {
      Loop(os.shape[0] / w, [&](llvm::Value* ib) {
        llvm::Value* i0 = b_.CreateMul(ib, b_.getInt64(w));
        llvm::Value* j0 = b_.CreateMul(jb, b_.getInt64(w));
        // rows[k] holds slice elements (i0 .. i0+w-1, j0+k): the input's
        // column j0+k, contiguous in memory.
        std::vector<llvm::Value*> rows;
        for (int64_t k = 0; k < w; ++k) {
          llvm::Value* at = Element(in, in_base, i0, b_.CreateAdd(j0, b_.getInt64(k)));
          rows.push_back(b_.CreateAlignedLoad(vt, at, align));
        }
        for (int64_t h = 1; h < w; h *= 2) {
          std::vector<int> low(static_cast<size_t>(w)), high(static_cast<size_t>(w));
          for (int64_t c = 0; c < w; ++c) {
            low[c] = static_cast<int>((c & h) ? w + (c & ~h) : c);
            high[c] = static_cast<int>((c & h) ? w + c : (c | h));
          }
          for (int64_t r = 0; r < w; ++r) {
            if (r & h) continue;
            llvm::Value* a = rows[r];
            llvm::Value* c = rows[r + h];
            rows[r] = b_.CreateShuffleVector(a, c, low);
            rows[r + h] = b_.CreateShuffleVector(a, c, high);
          }
        }
        // Now rows[m] holds slice elements (i0+m, j0 .. j0+w-1).
        for (int64_t m = 0; m < w; ++m) {
          llvm::Value* at = Element(out, out_base, b_.CreateAdd(i0, b_.getInt64(m)), j0);
          b_.CreateAlignedStore(rows[m], at, align);
        }
      });
    });
    auto by_element = [&](int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
      Loop(cols, [&](llvm::Value* j) {
        Loop(rows, [&](llvm::Value* i) {
          llvm::Value* ii = b_.CreateAdd(i, b_.getInt64(i0));
          llvm::Value* jj = b_.CreateAdd(j, b_.getInt64(j0));
          b_.CreateAlignedStore(b_.CreateAlignedLoad(st, Element(in, in_base, ii, jj), align),
                                Element(out, out_base, ii, jj), align);
        });
      });
    };
    by_element(rows_in_blocks, os.shape[0] - rows_in_blocks, 0, os.shape[1]);
    by_element(0, rows_in_blocks, cols_in_blocks, os.shape[1] - cols_in_blocks);
  }

  void EmitBroadcast(const IOp& op) {
    const int out = op.outputs[0], in = op.inputs[0];
    const ISlice& os = g_.slices()[out];
    llvm::Value* out_base = SliceBase(out);
    llvm::Value* in_base = SliceBase(in);
    const PrimitiveType t = TypeOf(out);
    llvm::Type* st = StorageType(t);
    if (op.axis == Axis::kRow) {  // (r, 1) -> (r, c)
      Loop(os.shape[0], [&](llvm::Value* i) {
        llvm::Value* v = b_.CreateLoad(st, Element(in, in_base, i, b_.getInt64(0)));
        Loop(os.shape[1], [&](llvm::Value* j) { b_.CreateStore(v, Element(out, out_base, i, j)); });
      });
    } else {  // (1, c) -> (r, c)
      Loop(os.shape[0], [&](llvm::Value* i) {
        Loop(os.shape[1], [&](llvm::Value* j) {
          b_.CreateStore(b_.CreateLoad(st, Element(in, in_base, b_.getInt64(0), j)),
                         Element(out, out_base, i, j));
        });
      });
    }
  }

  void EmitReduce(const IOp& op) {
    const int out = op.outputs[0], in = op.inputs[0];
    const ISlice& is = g_.slices()[in];
    llvm::Value* out_base = SliceBase(out);
    llvm::Value* in_base = SliceBase(in);
    const PrimitiveType t = TypeOf(in);
    const HloOpcode combine = igraph::FnOpcode(op.fn);
    llvm::Value* zero = b_.getInt64(0);
    if (op.axis == Axis::kRow) {  // (r, c) -> (r, 1)
      Loop(is.shape[0], [&](llvm::Value* i) {
        llvm::Value* first = Load(t, Element(in, in_base, i, zero));
        llvm::Value* acc = FoldLoop(1, is.shape[1], first, [&](llvm::Value* j, llvm::Value* a) {
          llvm::Value* next = Reassociable(combine, t, a, Load(t, Element(in, in_base, i, j)));
          // Narrow floats round after every step, as the reducer
          // computation in the narrow type does.
          return IsNarrowFloat(t) ? FromStorage(t, ToStorage(t, next)) : next;
        });
        Store(t, acc, Element(out, out_base, i, zero));
      });
    } else {  // (r, c) -> (1, c), accumulated in the output row
      Loop(is.shape[1], [&](llvm::Value* j) {
        Store(t, Load(t, Element(in, in_base, zero, j)), Element(out, out_base, zero, j));
      });
      Loop(is.shape[0] - 1, [&](llvm::Value* i0) {
        llvm::Value* i = b_.CreateAdd(i0, b_.getInt64(1));
        Loop(is.shape[1], [&](llvm::Value* j) {
          llvm::Value* o = Element(out, out_base, zero, j);
          Store(t, Binary(combine, t, Load(t, o), Load(t, Element(in, in_base, i, j))), o);
        });
      });
    }
  }

  // A reduction step the vectorizer may reorder: reductions have no fixed
  // order in HLO.
  llvm::Value* Reassociable(HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* x) {
    llvm::FastMathFlags saved = b_.getFastMathFlags();
    llvm::FastMathFlags flags;
    flags.setAllowReassoc();
    // A max or min reduction's order is unspecified, and so is which zero
    // it returns on a tie of -0 and +0: without the zeros' order, x86's
    // maximum is 3 instructions instead of 6 (NaNs still propagate).
    if (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum) flags.setNoSignedZeros();
    b_.setFastMathFlags(flags);
    llvm::Value* v = Binary(op, t, a, x);
    b_.setFastMathFlags(saved);
    return v;
  }

  llvm::Value* Compute(const IOp& op, const std::vector<llvm::Value*>& x, llvm::Value* i,
                       llvm::Value* j) {
    switch (op.kind) {
      case OpKind::kUnary:
        if (igraph::FnIs(op.fn, igraph::kScalarFn)) {
          return Binary(igraph::FnOpcode(op.fn), op.dtype, x[0],
                        Constant(op.params.at(0), op.dtype));
        }
        return Unary(igraph::FnOpcode(op.fn), op.dtype, x[0]);
      case OpKind::kBinary:
        return Binary(igraph::FnOpcode(op.fn), op.dtype, x[0], x[1]);
      case OpKind::kTernary:
        if (op.fn == igraph::Fn::kSelect) return b_.CreateSelect(x[0], x[1], x[2]);
        // clamp(lo, x, hi) = min(max(x, lo), hi)
        return Binary(HloOpcode::kMinimum, op.dtype,
                      Binary(HloOpcode::kMaximum, op.dtype, x[1], x[0]), x[2]);
      case OpKind::kCompare:
        return Compare(igraph::FnName(op.fn), op.dtype, x[0], x[1]);
      case OpKind::kConvert:
        if (op.fn == igraph::Fn::kBitcast) return BitcastConvert(op.dtype, op.to_dtype, x[0]);
        return Convert(op.dtype, op.to_dtype, x[0]);
      case OpKind::kFill:
        return Constant(op.params.at(0), op.dtype);
      case OpKind::kIota: {
        llvm::Value* v = AffineValue(op.iota_base);
        v = b_.CreateAdd(v, b_.CreateMul(i, b_.getInt64(op.iota_step[0])));
        v = b_.CreateAdd(v, b_.CreateMul(j, b_.getInt64(op.iota_step[1])));
        return Convert(PrimitiveType::kS64, op.dtype, v);
      }
      default:
        Refuse(std::string(OpKindName(op.kind)));
    }
  }

  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) {
    return b_.CreateIntrinsic(id, {x->getType()}, {x});
  }
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y) {
    return b_.CreateIntrinsic(id, {x->getType()}, {x, y});
  }
  // A call of the C library's `name` (float: `name` + "f").
  llvm::Value* Libm(const std::string& name, std::vector<llvm::Value*> args) {
    llvm::Type* t = args[0]->getType();
    const std::string symbol = t->isFloatTy() ? name + "f" : name;
    std::vector<llvm::Type*> types(args.size(), t);
    llvm::FunctionCallee callee =
        m_.getOrInsertFunction(symbol, llvm::FunctionType::get(t, types, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotThrow();
      f->setDoesNotAccessMemory();
    }
    return b_.CreateCall(callee, args);
  }

  llvm::Value* Unary(HloOpcode op, PrimitiveType t, llvm::Value* x) {
    using I = llvm::Intrinsic::IndependentIntrinsics;
    if (IsFloat(t)) {
      switch (op) {
        case HloOpcode::kAbs:
          return Intrinsic(I::fabs, x);
        case HloOpcode::kNegate:
          return b_.CreateFNeg(x);
        case HloOpcode::kSign: {
          llvm::Value* keep = b_.CreateOr(
              b_.CreateFCmpUNO(x, x), b_.CreateFCmpOEQ(x, llvm::ConstantFP::get(x->getType(), 0)));
          return b_.CreateSelect(
              keep, x, Intrinsic(I::copysign, llvm::ConstantFP::get(x->getType(), 1.0), x));
        }
        case HloOpcode::kExp:
          return EmitExp(b_, x);
        case HloOpcode::kExpm1:
          return EmitExpm1(b_, x);
        case HloOpcode::kLog:
          return EmitLog(b_, x);
        case HloOpcode::kLog1p:
          return EmitLog1p(b_, x);
        case HloOpcode::kTanh:
          return EmitTanh(b_, x);
        case HloOpcode::kLogistic:
          return EmitLogistic(b_, x);
        case HloOpcode::kSqrt:
          return Intrinsic(I::sqrt, x);
        case HloOpcode::kRsqrt:
          return b_.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), Intrinsic(I::sqrt, x));
        case HloOpcode::kFloor:
          return Intrinsic(I::floor, x);
        case HloOpcode::kCeil:
          return Intrinsic(I::ceil, x);
        case HloOpcode::kRoundNearestAfz:
          return Intrinsic(I::round, x);
        case HloOpcode::kRoundNearestEven:
          return Intrinsic(I::roundeven, x);
        case HloOpcode::kSin:
          return Libm("sin", {x});
        case HloOpcode::kCos:
          return Libm("cos", {x});
        case HloOpcode::kTan:
          return Libm("tan", {x});
        case HloOpcode::kCbrt:
          return Libm("cbrt", {x});
        case HloOpcode::kSinh:
          return Libm("sinh", {x});
        case HloOpcode::kCosh:
          return Libm("cosh", {x});
        case HloOpcode::kAsin:
          return Libm("asin", {x});
        case HloOpcode::kAcos:
          return Libm("acos", {x});
        case HloOpcode::kAsinh:
          return Libm("asinh", {x});
        case HloOpcode::kAcosh:
          return Libm("acosh", {x});
        case HloOpcode::kAtanh:
          return Libm("atanh", {x});
        case HloOpcode::kErf:
          return Libm("erf", {x});
        default:
          break;
      }
    } else if (t == PrimitiveType::kPred) {
      if (op == HloOpcode::kNot) return b_.CreateNot(x);
    } else {
      const bool is_signed = IsSigned(t);
      llvm::Value* zero = llvm::ConstantInt::get(x->getType(), 0);
      switch (op) {
        case HloOpcode::kAbs:
          if (is_signed)
            return b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateSub(zero, x), x);
          break;
        case HloOpcode::kNegate:
          return b_.CreateSub(zero, x);
        case HloOpcode::kSign: {
          llvm::Value* one = llvm::ConstantInt::get(x->getType(), 1);
          llvm::Value* pos = b_.CreateSelect(
              is_signed ? b_.CreateICmpSGT(x, zero) : b_.CreateICmpUGT(x, zero), one, zero);
          if (!is_signed) return pos;
          return b_.CreateSelect(b_.CreateICmpSLT(x, zero),
                                 llvm::ConstantInt::getSigned(x->getType(), -1), pos);
        }
        case HloOpcode::kNot:
          return b_.CreateNot(x);
        case HloOpcode::kPopulationCount:
          return Intrinsic(I::ctpop, x);
        case HloOpcode::kClz:
          return b_.CreateIntrinsic(I::ctlz, {x->getType()}, {x, b_.getFalse()});
        default:
          break;
      }
    }
    Refuse("unary " + std::string(hlo::OpcodeName(op)) + " on " +
           std::string(PrimitiveTypeName(t)));
  }

  llvm::Value* Binary(HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* c) {
    using I = llvm::Intrinsic::IndependentIntrinsics;
    if (IsFloat(t)) {
      switch (op) {
        case HloOpcode::kAdd:
          return b_.CreateFAdd(a, c);
        case HloOpcode::kSubtract:
          return b_.CreateFSub(a, c);
        case HloOpcode::kMultiply:
          return b_.CreateFMul(a, c);
        case HloOpcode::kDivide:
          return b_.CreateFDiv(a, c);
        case HloOpcode::kRemainder:
          return b_.CreateFRem(a, c);
        case HloOpcode::kPower:
          return Intrinsic(I::pow, a, c);
        case HloOpcode::kAtan2:
          return Libm("atan2", {a, c});
        case HloOpcode::kMaximum:
          return Intrinsic(I::maximum, a, c);
        case HloOpcode::kMinimum:
          return Intrinsic(I::minimum, a, c);
        default:
          break;
      }
    } else if (t == PrimitiveType::kPred) {
      // XLA's pred arithmetic is C++'s bool: add is or, multiply is and.
      switch (op) {
        case HloOpcode::kAnd:
        case HloOpcode::kMultiply:
        case HloOpcode::kMinimum:
          return b_.CreateAnd(a, c);
        case HloOpcode::kOr:
        case HloOpcode::kAdd:
        case HloOpcode::kMaximum:
          return b_.CreateOr(a, c);
        case HloOpcode::kXor:
        case HloOpcode::kSubtract:
          return b_.CreateXor(a, c);
        default:
          break;
      }
    } else {
      return IntBinary(op, t, a, c);
    }
    Refuse("binary " + std::string(hlo::OpcodeName(op)) + " on " +
           std::string(PrimitiveTypeName(t)));
  }

  llvm::Value* IntBinary(HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* c) {
    using I = llvm::Intrinsic::IndependentIntrinsics;
    llvm::Type* ty = a->getType();
    const bool s = IsSigned(t);
    const unsigned bits = ty->getIntegerBitWidth();
    auto k = [&](int64_t v) { return llvm::ConstantInt::getSigned(ty, v); };
    llvm::Value* zero = k(0);
    switch (op) {
      case HloOpcode::kAdd:
        return b_.CreateAdd(a, c);
      case HloOpcode::kSubtract:
        return b_.CreateSub(a, c);
      case HloOpcode::kMultiply:
        return b_.CreateMul(a, c);
      case HloOpcode::kMulhi: {  // the high half of the double-width product
        llvm::Type* wide = b_.getIntNTy(2 * bits);
        llvm::Value* p = s ? b_.CreateMul(b_.CreateSExt(a, wide), b_.CreateSExt(c, wide))
                           : b_.CreateMul(b_.CreateZExt(a, wide), b_.CreateZExt(c, wide));
        return b_.CreateTrunc(b_.CreateLShr(p, bits), ty);
      }
      case HloOpcode::kAnd:
        return b_.CreateAnd(a, c);
      case HloOpcode::kOr:
        return b_.CreateOr(a, c);
      case HloOpcode::kXor:
        return b_.CreateXor(a, c);
      case HloOpcode::kMaximum:
        return Intrinsic(s ? I::smax : I::umax, a, c);
      case HloOpcode::kMinimum:
        return Intrinsic(s ? I::smin : I::umin, a, c);
      case HloOpcode::kDivide:
      case HloOpcode::kRemainder: {
        // x / 0 = -1 (all ones), x % 0 = x; MIN / -1 = MIN, MIN % -1 = 0.
        llvm::Value* by_zero = b_.CreateICmpEQ(c, zero);
        llvm::Value* overflow =
            s ? b_.CreateAnd(b_.CreateICmpEQ(a, llvm::ConstantInt::get(
                                                    ty, llvm::APInt::getSignedMinValue(bits))),
                             b_.CreateICmpEQ(c, k(-1)))
              : b_.getFalse();
        llvm::Value* safe = b_.CreateSelect(b_.CreateOr(by_zero, overflow), k(1), c);
        if (op == HloOpcode::kDivide) {
          llvm::Value* q = s ? b_.CreateSDiv(a, safe) : b_.CreateUDiv(a, safe);
          return b_.CreateSelect(by_zero, k(-1), q);  // overflow: a / 1 = a
        }
        llvm::Value* r = s ? b_.CreateSRem(a, safe) : b_.CreateURem(a, safe);
        return b_.CreateSelect(by_zero, a, b_.CreateSelect(overflow, zero, r));
      }
      case HloOpcode::kShiftLeft:
      case HloOpcode::kShiftRightLogical:
      case HloOpcode::kShiftRightArithmetic: {
        llvm::Value* too_far = b_.CreateICmpUGE(c, k(bits));
        llvm::Value* amount = b_.CreateSelect(too_far, zero, c);
        if (op == HloOpcode::kShiftLeft) {
          return b_.CreateSelect(too_far, zero, b_.CreateShl(a, amount));
        }
        if (op == HloOpcode::kShiftRightLogical) {
          return b_.CreateSelect(too_far, zero, b_.CreateLShr(a, amount));
        }
        return b_.CreateAShr(a, b_.CreateSelect(too_far, k(bits - 1), c));
      }
      case HloOpcode::kPower: {
        // Square and multiply over every bit of the exponent; a negative
        // signed exponent gives 0 except for bases 1 and -1.
        llvm::Value* result = k(1);
        llvm::Value* base = a;
        llvm::Value* e = c;
        for (unsigned bit = 0; bit < bits; ++bit) {
          llvm::Value* odd = b_.CreateTrunc(e, b_.getInt1Ty());
          result = b_.CreateSelect(odd, b_.CreateMul(result, base), result);
          base = b_.CreateMul(base, base);
          e = b_.CreateLShr(e, k(1));
        }
        if (!s) return result;
        llvm::Value* neg = b_.CreateICmpSLT(c, zero);
        llvm::Value* odd = b_.CreateTrunc(c, b_.getInt1Ty());
        llvm::Value* special = b_.CreateSelect(
            b_.CreateICmpEQ(a, k(1)), k(1),
            b_.CreateSelect(b_.CreateICmpEQ(a, k(-1)), b_.CreateSelect(odd, k(-1), k(1)), zero));
        return b_.CreateSelect(neg, special, result);
      }
      default:
        Refuse("binary " + std::string(hlo::OpcodeName(op)) + " on " +
               std::string(PrimitiveTypeName(t)));
    }
  }

  llvm::Value* Compare(std::string_view direction, PrimitiveType t, llvm::Value* a,
                       llvm::Value* c) {
    using P = llvm::CmpInst::Predicate;
    if (direction.ends_with("_total")) {
      // The total order on floats is the signed order of the bits with
      // every bit but the sign flipped on negatives (narrow floats are
      // exact in f32, their compute type).
      direction.remove_suffix(6);
      const unsigned width = a->getType()->getScalarSizeInBits();
      llvm::Type* it = llvm::IntegerType::get(ctx_, width);
      auto key = [&](llvm::Value* v) {
        llvm::Value* bits = b_.CreateBitCast(v, it);
        llvm::Value* mask = b_.CreateLShr(b_.CreateAShr(bits, width - 1), 1);
        return b_.CreateXor(bits, mask);
      };
      return Compare(direction, PrimitiveType::kS64, key(a), key(c));
    }
    if (IsFloat(t)) {
      // Every direction but ne is false on NaN.
      P p = direction == "eq"   ? P::FCMP_OEQ
            : direction == "ne" ? P::FCMP_UNE
            : direction == "lt" ? P::FCMP_OLT
            : direction == "le" ? P::FCMP_OLE
            : direction == "gt" ? P::FCMP_OGT
                                : P::FCMP_OGE;
      return b_.CreateFCmp(p, a, c);
    }
    const bool s = IsSigned(t);
    P p = direction == "eq"   ? P::ICMP_EQ
          : direction == "ne" ? P::ICMP_NE
          : direction == "lt" ? (s ? P::ICMP_SLT : P::ICMP_ULT)
          : direction == "le" ? (s ? P::ICMP_SLE : P::ICMP_ULE)
          : direction == "gt" ? (s ? P::ICMP_SGT : P::ICMP_UGT)
                              : (s ? P::ICMP_SGE : P::ICMP_UGE);
    return b_.CreateICmp(p, a, c);
  }

  // The same bits read as `to` (IsRegisterBitcast: the iGraph builder
  // keeps other bitcast-converts on the evaluator).
  llvm::Value* BitcastConvert(PrimitiveType from, PrimitiveType to, llvm::Value* v) {
    if (!IsRegisterBitcast(from, to)) {
      Refuse("bitcast-convert from " + std::string(PrimitiveTypeName(from)) + " to " +
             std::string(PrimitiveTypeName(to)));
    }
    return b_.CreateBitCast(v, ComputeType(to));
  }

  // XLA's conversions: float -> int saturates and sends NaN to 0; x -> pred
  // is x != 0; integers extend by the source's signedness.
  llvm::Value* Convert(PrimitiveType from, PrimitiveType to, llvm::Value* v) {
    llvm::Type* target = ComputeType(to);
    if (from == to) return v;
    if (to == PrimitiveType::kPred) {
      if (IsFloat(from)) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0));
      return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    }
    if (from == PrimitiveType::kPred) {
      return IsFloat(to) ? b_.CreateUIToFP(v, target) : b_.CreateZExt(v, target);
    }
    if (IsFloat(from) && IsFloat(to)) return b_.CreateFPCast(v, target);
    if (IsFloat(from)) {
      return b_.CreateIntrinsic(
          IsSigned(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat,
          {target, v->getType()}, {v});
    }
    if (IsFloat(to)) {
      return IsSigned(from) ? b_.CreateSIToFP(v, target) : b_.CreateUIToFP(v, target);
    }
    return b_.CreateIntCast(v, target, IsSigned(from));
  }

  const IGraph& g_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  std::vector<llvm::Value*> bases_;  // per iPointer
  const DramAliasing* aliasing_ = nullptr;
  const std::vector<bool>* aligned_ = nullptr;  // by iPointer index
  // With a timer (EmitKernel's `timer`): the cycle counter before a loop
  // body, and after it its ticks and `bodies` (parallel ids) added to the
  // timer's two counters; without, nothing.
  llvm::Value* StartTimer() {
    if (timer_ == nullptr) return nullptr;
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::readcyclecounter),
                         {}, "start");
  }
  void StopTimer(llvm::Value* started, llvm::Value* bodies) {
    if (timer_ == nullptr) return;
    llvm::Value* now = b_.CreateCall(
        llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::readcyclecounter), {}, "end");
    llvm::Type* i64 = b_.getInt64Ty();
    auto add = [&](int64_t slot, llvm::Value* v) {
      b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, b_.CreateConstInBoundsGEP1_64(i64, timer_, slot),
                         v, llvm::MaybeAlign(8), llvm::AtomicOrdering::Monotonic);
    };
    add(0, b_.CreateSub(now, started));
    add(1, bodies);
  }

  llvm::GlobalVariable* timer_ = nullptr;  // {ticks, bodies}, or none
  std::vector<llvm::Value*> vars_;         // per index variable, at the current point
  int64_t loops_ = 0;                      // loops emitted so far
  std::vector<std::vector<int>> source_;   // row forms: per body iOp and input, its writer
  llvm::Value* row_buffers_ = nullptr;
};

}  // namespace

void EmitKernel(const IGraph& graph, const std::string& name, llvm::Module& module,
                const DramAliasing* aliasing, const std::vector<bool>* aligned,
                const std::string& timer) {
  llvm::GlobalVariable* counters = nullptr;
  if (!timer.empty()) {
    counters = module.getNamedGlobal(timer);
    if (counters == nullptr) {
      auto* type = llvm::ArrayType::get(llvm::Type::getInt64Ty(module.getContext()), 2);
      counters = new llvm::GlobalVariable(module, type, /*isConstant=*/false,
                                          llvm::GlobalValue::ExternalLinkage,
                                          llvm::ConstantAggregateZero::get(type), timer);
      counters->setAlignment(llvm::Align(64));
    }
  }
  UIR_CHECK(graph.planned()) << "iGraph " << graph.name() << " is emitted before it is planned";
  KernelEmitter emitter(graph, module);
  emitter.Emit(name, aliasing, aligned, counters);
  if (aliasing != nullptr) emitter.AddAliasScopes(aliasing->disjoint);
}

}  // namespace uir::codegen
