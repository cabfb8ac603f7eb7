// Emits a planned iGraph as one LLVM function: a loop over parallel ids,
// in it the prologue, the loop over loop ids with the body, and the
// epilogue. It carries out the iGraph's plan (kernel_plan.h) and decides
// nothing of its own: in the loops form each iOp is a loop nest over its
// slice's rows and columns (rows innermost, or block transposes, where the
// plan says; runs of elementwise iOps share one, or the loops of the
// column reduction they feed), in the rows form each row runs through the
// plan's column loops, in the coalesced form a range of parallel ids is one
// column loop; prefetches go where the plan puts them. The loop vectorizer
// turns the inner loops into vector code. reg and sram iPointers live in
// the caller's scratch, dram ones in the buffers.
//
// Loops, slices and plans are this file's; the arithmetic on one element
// (types, conversions, each function's meaning) is ScalarEmitter's
// (scalar_emitter.h).
#include "codegen/emitter.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <vector>

#include "codegen/math.h"
#include "codegen/scalar_emitter.h"
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
    LoopProperty(back, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")});
  }
  // Asks LLVM's loop vectorizer to run `count` vectors of the loop ending
  // in `back` side by side (the plan's interleave).
  void Interleave(llvm::BranchInst* back, int64_t count) {
    LoopProperty(back, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                        llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(count)))});
  }
  // The loop ending in `back` gets `property` as its one loop property.
  void LoopProperty(llvm::BranchInst* back, llvm::ArrayRef<llvm::Metadata*> property) {
    llvm::MDNode* id =
        llvm::MDNode::getDistinct(ctx_, {nullptr, llvm::MDNode::get(ctx_, property)});
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

  llvm::Value* AffineValue(const Affine& a) { return AffineAt(b_, a, vars_); }

  // Element (0, 0) of slice `s` at the current index values.
  llvm::Value* SliceBase(int s) {
    const ISlice& slice = g_.slices()[s];
    const PrimitiveType t = g_.pointers()[slice.pointer].dtype;
    return b_.CreateInBoundsGEP(s_.StorageType(t), bases_[slice.pointer],
                                AffineValue(slice.offset));
  }
  llvm::Value* Element(int s, llvm::Value* base, llvm::Value* i, llvm::Value* j) {
    const ISlice& slice = g_.slices()[s];
    const PrimitiveType t = g_.pointers()[slice.pointer].dtype;
    llvm::Value* at = b_.CreateAdd(b_.CreateMul(i, b_.getInt64(slice.stride[0])),
                                   b_.CreateMul(j, b_.getInt64(slice.stride[1])));
    return b_.CreateInBoundsGEP(s_.StorageType(t), base, at);
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
      s_.StorageType(p.dtype);  // refuses types without a machine form
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
    const bool row_form = plan.row_form();
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
      llvm::Value* lo = b_.CreateMul(begin, b_.getInt64(w));
      llvm::Value* hi = b_.CreateMul(end, b_.getInt64(w));
      // One loop, whose stores LLVM can prove aligned (for non-temporal
      // stores) where the output is. Its loads straddle lines where the
      // inputs start mid-line, as NumPy's large arrays do (16 bytes in):
      // starting the loop at the inputs' first aligned column instead
      // (a head loop up to there) made the stores straddle and lose their
      // non-temporal form, which cost more (tanh(a*b+c) over 16M floats
      // of NumPy's, 256-bit vectors on a Zen 4: 1.30x of a*b+c against
      // 1.05x, benchmarks/HISTORY.md).
      EmitColumnLoop(ops, 0, ops.size(), b_.getInt64(0), lo, hi);
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
  void SetDigits(llvm::Value* id, bool parallel) { SetIndexDigits(b_, g_, id, parallel, vars_); }

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
    return b_.CreateInBoundsGEP(s_.StorageType(t), base, j);
  }
  bool IsDram(int slice) const { return g_.PointerOf(slice).level == Level::kDram; }
  // A value of `t` as its storage would round it (narrow floats).
  llvm::Value* Rounded(PrimitiveType t, llvm::Value* v) {
    return IsNarrowFloat(t) ? s_.FromStorage(t, s_.ToStorage(t, v)) : v;
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
        acc[k] = b_.CreatePHI(s_.ComputeType(t), 2, "acc");
        acc[k]->addIncoming(ReductionStart(s_, b_, ops[k].fn, t), pre);
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
            width > 1 ? static_cast<llvm::Value*>(acc[k]) : ReductionStart(s_, b_, op.fn, it);
        next_acc[k] = Rounded(it, s_.Reassociable(igraph::FnOpcode(op.fn), it, start, x));
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
        s_.Store(t, v, DramElement(out, i, jv));
      } else if (op.plan.row_buffer >= 0) {
        s_.Store(t, v, RowBuffer(op, jv));
      }
    }
    if (width > 1) {
      PrefetchAhead(ops, first, end, i, jv);
      llvm::Value* next = b_.CreateNUWAdd(j, b_.getInt64(1));
      j->addIncoming(next, b_.GetInsertBlock());
      for (size_t k : reduces) acc[k]->addIncoming(next_acc[k], b_.GetInsertBlock());
      auto* exit = llvm::BasicBlock::Create(ctx_, "columns.exit", fn_);
      llvm::BranchInst* back =
          b_.CreateCondBr(b_.CreateICmpULT(next, ranged ? j_end : b_.getInt64(width)), loop, exit);
      const igraph::KernelPlan& plan = g_.plan();
      const auto loop_index = static_cast<size_t>(LoopOf(ops[first]));
      if (loop_index < plan.interleave.size() && plan.interleave[loop_index] > 1) {
        Interleave(back, plan.interleave[loop_index]);
      }
      b_.SetInsertPoint(exit);
      ++loops_;
    }
    // Reductions are complete after the loop.
    for (size_t k : reduces) {
      const IOp& op = ops[k];
      const int out = op.outputs[0];
      const PrimitiveType t = TypeOf(out);
      if (IsDram(out)) {
        s_.Store(t, next_acc[k], DramElement(out, i, b_.getInt64(0)));
      } else if (op.plan.row_buffer >= 0) {
        s_.Store(t, next_acc[k], RowBuffer(op, b_.getInt64(0)));
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
        llvm::Value* p = b_.CreateGEP(s_.StorageType(t), SliceBase(f.slice), at);
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
    if (src < 0) return s_.Load(t, DramElement(slice, i, j));
    auto it = value.find(static_cast<size_t>(src));
    if (it != value.end()) return it->second;
    const IOp& writer = ops[static_cast<size_t>(src)];
    if (writer.plan.reread) return s_.Load(t, DramElement(writer.inputs[0], i, j));
    UIR_CHECK(writer.plan.row_buffer >= 0)
        << "iOp " << k << " reads iOp " << src << " with no row buffer";
    return s_.Load(t, RowBuffer(writer, j));
  }

  // A section's iOps in order; consecutive elementwise iOps over slices of
  // one shape run as one loop nest (ElementwiseRunEnd).
  void EmitSection(Section s) {
    const std::vector<IOp>& ops = g_.ops(s);
    size_t k = 0;
    while (k < ops.size()) {
      const size_t end = ElementwiseRunEnd(ops, k);
      if (end > k && FeedsColumnReduce(ops, k, end)) {
        EmitRunIntoColumnReduce(ops, k, end);
        k = end + 1;
      } else if (end > k) {
        EmitElementwise(ops, k, end);
        k = end;
      } else {
        EmitOp(ops[k]);
        ++k;
      }
    }
  }

  static bool IsElementwise(const IOp& op) {
    switch (op.kind) {
      case OpKind::kSync:
      case OpKind::kIdentity:
      case OpKind::kBroadcast:
      case OpKind::kReduce:
        return false;
      default:
        return op.plan.block == 0;  // a block transpose has loops of its own
    }
  }

  // Whether slices a and b are the same elements, of one type, of the same
  // storage (dram iPointers at one address, as in-place outputs are, share
  // a base).
  bool SameElements(int a, int b) const {
    const ISlice& x = g_.slices()[a];
    const ISlice& y = g_.slices()[b];
    return bases_[x.pointer] == bases_[y.pointer] && TypeOf(a) == TypeOf(b) &&
           x.offset == y.offset && x.shape == y.shape && x.stride == y.stride;
  }
  bool SameStorage(int a, int b) const {
    return bases_[g_.slices()[a].pointer] == bases_[g_.slices()[b].pointer];
  }

  // The end of the run of elementwise iOps from k that one loop nest
  // carries, element by element, values passing in registers: each iOp's
  // slices have the run's shape, and a slice the run writes is read or
  // written again in the run only as the same elements (storage touched
  // elsewhere would see the loop's order). k itself when ops[k] is no
  // elementwise iOp. In the loops form every iOp had been a loop nest of
  // its own through local buffers: a loss and its gradient (a sum of
  // squares beside 2(x - y)/n over 256x1024) went through nine.
  size_t ElementwiseRunEnd(const std::vector<IOp>& ops, size_t k) {
    if (!IsElementwise(ops[k])) return k;
    const std::array<int64_t, 2> shape = g_.slices()[ops[k].outputs[0]].shape;
    const bool flat = Flat(ops[k]);
    std::vector<int> read, written;
    size_t end = k;
    for (; end < ops.size(); ++end) {
      const IOp& op = ops[end];
      if (end > k) {
        // A run walked flat stays flat: an iOp that would make it a nest of
        // short rows runs on its own.
        if (!IsElementwise(op) || op.plan.by_columns != ops[k].plan.by_columns ||
            Flat(op) != flat) {
          break;
        }
        const int out = op.outputs[0];
        bool joins = g_.slices()[out].shape == shape && Consistent(out, written) &&
                     Consistent(out, read) && Consistent(out, op.inputs);
        for (int in : op.inputs) {
          joins = joins && g_.slices()[in].shape == shape && Consistent(in, written);
        }
        if (!joins) break;
      }
      read.insert(read.end(), op.inputs.begin(), op.inputs.end());
      written.push_back(op.outputs[0]);
    }
    return end;
  }
  // Whether slice s is the same elements as each of `others` on its storage.
  bool Consistent(int s, const std::vector<int>& others) const {
    for (int o : others) {
      if (SameStorage(s, o) && !SameElements(s, o)) return false;
    }
    return true;
  }

  // --- iOps ------------------------------------------------------------------
  void EmitOp(const IOp& op) {
    switch (op.kind) {
      case OpKind::kSync:
        if (op.to == Level::kDram) Unsupported("a sync across every unit (dram scope)");
        return;  // a group is one thread on a CPU
      case OpKind::kIdentity:
        return;
      case OpKind::kBroadcast:
      case OpKind::kReduce:
        if (op.scope == igraph::Scope::kGroup && op.group_size > 1) {
          Unsupported("a group-scope " + std::string(OpKindName(op.kind)) + " over " +
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
        // Elementwise iOps run in EmitSection's runs; what reaches here is a
        // block transpose.
        UIR_CHECK(op.plan.block != 0) << "an elementwise iOp outside a run";
        EmitBlockTranspose(op, op.plan.block);
        return;
    }
  }

  void CheckNoOverlap(const IOp& op) {
    const ISlice& out = g_.slices()[op.outputs[0]];
    for (int in : op.inputs) {
      if (g_.slices()[in].pointer == out.pointer) {
        Unsupported("a " + std::string(OpKindName(op.kind)) + " that writes the iPointer it reads");
      }
    }
  }

  // Whether an elementwise iOp's slices all have rows that follow each
  // other in memory (as a row-major local slice's do), so one loop over
  // all their elements walks them: a short row is no inner loop of its
  // own, and the loop vectorizes across rows.
  bool Flat(const IOp& op) const {
    const ISlice& os = g_.slices()[op.outputs[0]];
    bool flat = !op.plan.by_columns && os.shape[0] > 1 && os.shape[1] > 1;
    for (size_t k = 0; flat && k <= op.inputs.size(); ++k) {
      const ISlice& sl = g_.slices()[k < op.inputs.size() ? op.inputs[k] : op.outputs[0]];
      flat = sl.shape == os.shape && sl.stride[0] == os.shape[1] * sl.stride[1];
    }
    return flat;
  }

  // iOps [first, end) of a run (ElementwiseRunEnd) as one loop nest over
  // their common shape: each element goes through every iOp, each output
  // stored, and an input the run wrote at the same element taken from the
  // register that held it.
  void EmitElementwise(const std::vector<IOp>& ops, size_t first, size_t end) {
    const IOp& lead = ops[first];
    const ISlice& os = g_.slices()[lead.outputs[0]];
    const Run run = PrepareRun(ops, first, end, end);
    // The plan's order: a move reading down its columns loops over rows
    // innermost, so its reads are contiguous. Flat runs are one loop.
    if (run.flat) {
      // Element (0, k) of a flat slice is its k-th; an iota reads
      // its true row and column.
      Loop(os.shape[0] * os.shape[1], [&](llvm::Value* k) { RunElement(run, b_.getInt64(0), k); });
    } else if (lead.plan.by_columns) {
      Loop(os.shape[1], [&](llvm::Value* j) {
        Loop(os.shape[0], [&](llvm::Value* i) { RunElement(run, i, j); });
      });
    } else {
      Loop(os.shape[0], [&](llvm::Value* i) {
        Loop(os.shape[1], [&](llvm::Value* j) { RunElement(run, i, j); });
      });
    }
  }

  // Whether the run [first, end) feeds a column reduction, ops[end], of its
  // last output and nothing of the run touches the reduction's output: the
  // reduction then takes each row from the run's registers (a move from
  // dram and a column sum had been a copy of the whole block to a local
  // buffer, read again by the sum). Not for runs reading down columns
  // (the fold's rows would read across them), nor for flat runs of short
  // rows (under 64), which vectorize across rows on their own.
  bool FeedsColumnReduce(const std::vector<IOp>& ops, size_t first, size_t end) const {
    if (end >= ops.size() || ops[first].plan.by_columns ||
        (Flat(ops[first]) && g_.slices()[ops[first].outputs[0]].shape[1] < 64)) {
      return false;
    }
    const IOp& r = ops[end];
    if (r.kind != OpKind::kReduce || r.axis != Axis::kCol ||
        (r.scope == igraph::Scope::kGroup && r.group_size > 1) ||
        !SameElements(r.inputs[0], ops[end - 1].outputs[0])) {
      return false;
    }
    for (size_t k = first; k < end; ++k) {
      if (SameStorage(ops[k].outputs[0], r.outputs[0])) return false;
      for (int in : ops[k].inputs) {
        if (SameStorage(in, r.outputs[0])) return false;
      }
    }
    return true;
  }

  // The run [first, end) and the column reduction ops[end] of its last
  // output: each row's elements through the run in registers, folded into
  // the reduction's output row.
  void EmitRunIntoColumnReduce(const std::vector<IOp>& ops, size_t first, size_t end) {
    Run run = PrepareRun(ops, first, end, end + 1);
    run.flat = false;  // rows one by one, as the fold takes them
    FoldColumns(ops[end], [&](llvm::Value* i, llvm::Value* j) { return RunElement(run, i, j); });
  }

  // Column reduction `op`, (r, c) -> (1, c), accumulated in the output row:
  // row 0 stored as its bytes are, each later row combined into it.
  // `element(i, j)` gives element (i, j) of the input as stored.
  void FoldColumns(const IOp& op,
                   const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& element) {
    const int out = op.outputs[0];
    const ISlice& is = g_.slices()[op.inputs[0]];
    const PrimitiveType t = TypeOf(op.inputs[0]);
    const HloOpcode combine = igraph::FnOpcode(op.fn);
    llvm::Value* out_base = SliceBase(out);
    llvm::Value* zero = b_.getInt64(0);
    Loop(is.shape[1], [&](llvm::Value* j) {
      b_.CreateStore(element(zero, j), Element(out, out_base, zero, j));
    });
    Loop(is.shape[0] - 1, [&](llvm::Value* i0) {
      llvm::Value* i = b_.CreateAdd(i0, b_.getInt64(1));
      Loop(is.shape[1], [&](llvm::Value* j) {
        llvm::Value* o = Element(out, out_base, zero, j);
        llvm::Value* x = s_.FromStorage(t, element(i, j));
        s_.Store(t, s_.Binary(combine, t, s_.Load(t, o), x), o);
      });
    });
  }

  // A run's slice bases and which of its outputs are stored: dram ones
  // always, local ones when an iOp before `first` or from `readers_end` on
  // (in any section) reads their storage.
  struct Run {
    const std::vector<IOp>* ops;
    size_t first, end;
    std::map<int, llvm::Value*> base;  // by slice
    std::vector<bool> stored;
    bool flat;
  };
  Run PrepareRun(const std::vector<IOp>& ops, size_t first, size_t end, size_t readers_end) {
    Run run{&ops, first, end, {}, std::vector<bool>(end - first, true), Flat(ops[first])};
    for (size_t k = first; k < end; ++k) {
      const IOp& op = ops[k];
      const ISlice& out = g_.slices()[op.outputs[0]];
      // An input sharing the output's iPointer at another place would be
      // overwritten before it is read; the interpreter reads first.
      for (int in : op.inputs) {
        const ISlice& is = g_.slices()[in];
        if (is.pointer == out.pointer && !(is.offset == out.offset && is.stride == out.stride)) {
          Unsupported("an iOp whose output overlaps its input at another place");
        }
      }
      for (int in : op.inputs) run.base.emplace(in, nullptr);
      run.base.emplace(op.outputs[0], nullptr);
    }
    for (auto& [slice, b] : run.base) b = SliceBase(slice);
    for (size_t k = first; k < end; ++k) {
      const int out = ops[k].outputs[0];
      if (IsDram(out)) continue;
      bool read_elsewhere = false;
      for (Section s : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
        const std::vector<IOp>& all = g_.ops(s);
        for (size_t m = 0; m < all.size() && !read_elsewhere; ++m) {
          if (&all == &ops && m > k && m < readers_end) continue;  // reads the registers
          for (int in : all[m].inputs) read_elsewhere = read_elsewhere || SameStorage(in, out);
        }
      }
      run.stored[k - first] = read_elsewhere;
    }
    return run;
  }

  // Element (i, j) through every iOp of the run, each stored output
  // stored; the last output's bytes as stored (its storage's rounding).
  llvm::Value* RunElement(const Run& run, llvm::Value* i, llvm::Value* j) {
    const std::vector<IOp>& ops = *run.ops;
    const int64_t columns = g_.slices()[ops[run.first].outputs[0]].shape[1];
    // This element as each iOp of the run left it: its bytes as stored
    // (raw) and, when a later iOp asks, its value in the compute type.
    struct Held {
      PrimitiveType t;
      llvm::Value* raw = nullptr;
      llvm::Value* value = nullptr;
    };
    std::vector<std::pair<int, Held>> held;  // by output slice, in order
    auto find = [&](int in) -> Held* {
      for (auto it = held.rbegin(); it != held.rend(); ++it) {
        if (SameElements(it->first, in)) return &it->second;
      }
      return nullptr;
    };
    auto raw_of = [&](int in) {
      if (Held* h = find(in)) return h->raw;
      return static_cast<llvm::Value*>(
          b_.CreateLoad(s_.StorageType(TypeOf(in)), Element(in, run.base.at(in), i, j)));
    };
    auto value_of = [&](int in) {
      if (Held* h = find(in)) {
        if (h->value == nullptr) h->value = s_.FromStorage(h->t, h->raw);
        return h->value;
      }
      return s_.Load(TypeOf(in), Element(in, run.base.at(in), i, j));
    };
    for (size_t k = run.first; k < run.end; ++k) {
      const IOp& op = ops[k];
      const int out = op.outputs[0];
      Held h{TypeOf(out)};
      if (op.kind == OpKind::kMove) {
        // Bytes as they are: no conversion through the compute type.
        h.raw = raw_of(op.inputs[0]);
      } else {
        std::vector<llvm::Value*> x;
        for (int in : op.inputs) x.push_back(value_of(in));
        llvm::Value* v = run.flat && op.kind == OpKind::kIota
                             ? Compute(op, x, b_.CreateUDiv(j, b_.getInt64(columns)),
                                       b_.CreateURem(j, b_.getInt64(columns)))
                             : Compute(op, x, i, j);
        h.raw = s_.ToStorage(h.t, v);  // a later reader sees the stored rounding
      }
      if (run.stored[k - run.first]) b_.CreateStore(h.raw, Element(out, run.base.at(out), i, j));
      held.emplace_back(out, h);
    }
    return held.back().second.raw;
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
    llvm::Type* st = s_.StorageType(t);
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
    llvm::Type* st = s_.StorageType(t);
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
    llvm::Value* in_base = SliceBase(in);
    const PrimitiveType t = TypeOf(in);
    if (op.axis == Axis::kRow) {  // (r, c) -> (r, 1)
      const HloOpcode combine = igraph::FnOpcode(op.fn);
      llvm::Value* out_base = SliceBase(out);
      llvm::Value* zero = b_.getInt64(0);
      Loop(is.shape[0], [&](llvm::Value* i) {
        llvm::Value* first = s_.Load(t, Element(in, in_base, i, zero));
        llvm::Value* acc = FoldLoop(1, is.shape[1], first, [&](llvm::Value* j, llvm::Value* a) {
          llvm::Value* next =
              s_.Reassociable(combine, t, a, s_.Load(t, Element(in, in_base, i, j)));
          // Narrow floats round after every step, as the reducer
          // computation in the narrow type does.
          return IsNarrowFloat(t) ? s_.FromStorage(t, s_.ToStorage(t, next)) : next;
        });
        s_.Store(t, acc, Element(out, out_base, i, zero));
      });
    } else {
      FoldColumns(op, [&](llvm::Value* i, llvm::Value* j) -> llvm::Value* {
        return b_.CreateLoad(s_.StorageType(t), Element(in, in_base, i, j));
      });
    }
  }

  llvm::Value* Compute(const IOp& op, const std::vector<llvm::Value*>& x, llvm::Value* i,
                       llvm::Value* j) {
    return EmitIOpFunction(s_, b_, op, x,
                           op.kind == OpKind::kIota ? AffineValue(op.iota_base) : nullptr, i, j);
  }

  const IGraph& g_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  ScalarEmitter s_{b_, m_};
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
