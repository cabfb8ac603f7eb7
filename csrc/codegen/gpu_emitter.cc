// Emits an iGraph lowered for the GPU model as one kernel, by the seed's
// mapping: a group is a thread block, a unit one warp of it. Parallel id
// = block * numUnit + warp; a warp past numParallel (the last block's)
// runs no iOp but takes part in every block barrier. Each warp runs the
// prologue, the loop over loop ids and the epilogue; within an iOp its 32
// lanes share the elements.
//
// Where iPointers live (ChoosePlacement): dram in global memory (the
// kernel's parameters), sram in shared memory (one copy per block), reg
// either in the lanes (element a of the iPointer in lane a % 32, slot
// a / 32: registers, as every slot index is a constant once the iOps'
// loops are unrolled) or, when some iOp would need an element of another
// lane, in shared memory (one copy per warp).
//  - Elementwise iOps (move, unary, ..., iota): lane l takes the elements
//    e = l + 32m of the output's row-major order; a lane-held slice must
//    be contiguous from a multiple of 32, so its element e is the lane's.
//  - reduce.row.unit: each lane folds its elements of a row, five
//    butterfly shuffles combine the lanes, the lane holding the result's
//    element stores it. broadcast.row.unit: the lane holding the row's
//    value shuffles it to all. Column reductions and broadcasts need no
//    other lane: a lane-held (r, c) slice with c a multiple of 32 has
//    column j in lane j % 32.
//  - A warp barrier follows every iOp touching warp memory, a block
//    barrier every iOp touching sram (and every write of a dram iPointer
//    the kernel also reads).
#include "codegen/gpu_emitter.h"

#include <functional>
#include <set>
#include <vector>

#include "codegen/emitter.h"
#include "codegen/scalar_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
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

constexpr int64_t kWarp = 32;
// Loops of at most this many trips are unrolled as they are emitted (slot
// indices become constants); longer ones are loops, their lane slots
// indexed at run time (local memory: correct, slower).
constexpr int64_t kUnroll = 64;
constexpr unsigned kGlobalSpace = 1, kSharedSpace = 3;

enum class Place : uint8_t { kGlobal, kBlock, kWarp, kLane };

const char* PlaceName(Place p) {
  switch (p) {
    case Place::kGlobal:
      return "global";
    case Place::kBlock:
      return "shared";
    case Place::kWarp:
      return "warp";
    case Place::kLane:
      return "lane";
  }
  return "?";
}

class GpuKernelEmitter {
 public:
  GpuKernelEmitter(const IGraph& g, llvm::Module& m, GpuFlavor flavor)
      : g_(g), m_(m), ctx_(m.getContext()), b_(ctx_), ptx_(flavor == GpuFlavor::kPtx) {
    s_.set_gpu(true);
  }

  GpuLaunch Emit(const std::string& name) {
    if (g_.hardware().target != "gpu") {
      Unsupported("iGraph " + g_.name() + " is lowered for the " + g_.hardware().target +
                  " model, not the GPU's");
    }
    ChoosePlacement();
    GpuLaunch launch;
    launch.name = name;
    launch.graph = g_.name();
    const int64_t units = g_.hardware().num_unit;
    launch.block = kWarp * units;
    launch.grid = (g_.num_parallel() + units - 1) / units;
    Layout(launch);
    for (size_t p = 0; p < place_.size(); ++p) launch.placement.push_back(PlaceName(place_[p]));
    MakeFunction(name, launch.params);
    try {
      Body();
      CheckCalls();
    } catch (...) {
      fn_->eraseFromParent();
      throw;
    }
    if (ptx_) Annotate(launch);
    launch.synchronizes = synchronizes_;
    return launch;
  }

 private:
  // --- Placement and memory layout ------------------------------------------
  const ISlice& S(int s) const { return g_.slices()[s]; }
  Place PlaceOf(int s) const { return place_[static_cast<size_t>(S(s).pointer)]; }
  bool IsLane(int s) const { return PlaceOf(s) == Place::kLane; }
  // Element (i, j) at offset + i * c + j, from a multiple of 32: element e
  // of the row-major order is in lane e % 32.
  bool DenseAligned(int s) const {
    const ISlice& sl = S(s);
    if (!(sl.shape[1] == 1 || sl.stride[1] == 1)) return false;
    if (!(sl.shape[0] == 1 || sl.stride[0] == sl.shape[1])) return false;
    if (sl.offset.constant % kWarp != 0) return false;
    for (const auto& [var, c] : sl.offset.terms) {
      if (c % kWarp != 0) return false;
    }
    return true;
  }
  bool WholeRows(int s) const { return DenseAligned(s) && S(s).shape[1] % kWarp == 0; }

  static std::vector<int> SlicesOf(const IOp& op) {
    std::vector<int> all(op.outputs);
    all.insert(all.end(), op.inputs.begin(), op.inputs.end());
    if (op.buffer >= 0) all.push_back(op.buffer);
    return all;
  }
  // The lane-held slices of `op` that cannot stay in lanes: those whose
  // elements the iOp needs in other lanes.
  std::vector<int> Offenders(const IOp& op) const {
    const std::vector<int> all = SlicesOf(op);
    std::vector<int> out;
    switch (op.kind) {
      case OpKind::kSync:
        break;
      case OpKind::kIdentity: {  // the same bytes: all in lanes, or none
        bool every = true;
        for (int s : all) every = every && IsLane(s);
        if (!every) {
          for (int s : all) {
            if (IsLane(s)) out.push_back(s);
          }
        }
        break;
      }
      case OpKind::kReduce:
      case OpKind::kBroadcast: {
        if (op.scope == igraph::Scope::kGroup && op.group_size > 1) {
          for (int s : all) {
            if (IsLane(s)) out.push_back(s);
          }
          break;
        }
        const int big = op.kind == OpKind::kReduce ? op.inputs[0] : op.outputs[0];
        const int small = op.kind == OpKind::kReduce ? op.outputs[0] : op.inputs[0];
        if (IsLane(big) && !WholeRows(big)) out.push_back(big);
        if (op.axis == Axis::kCol && IsLane(small) && !DenseAligned(small)) out.push_back(small);
        break;
      }
      default:
        for (int s : all) {
          if (IsLane(s) && !DenseAligned(s)) out.push_back(s);
        }
        break;
    }
    return out;
  }
  void ChoosePlacement() {
    for (const igraph::IPointer& p : g_.pointers()) {
      place_.push_back(p.level == Level::kDram   ? Place::kGlobal
                       : p.level == Level::kSram ? Place::kBlock
                                                 : Place::kLane);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (Section sec : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
        for (const IOp& op : g_.ops(sec)) {
          for (int s : Offenders(op)) {
            place_[static_cast<size_t>(S(s).pointer)] = Place::kWarp;
            changed = true;
          }
        }
      }
    }
    // dram iPointers the kernel both writes and reads: a block barrier
    // orders a write before another lane's or warp's read.
    std::set<int> written, read;
    for (Section sec : {Section::kPrologue, Section::kBody, Section::kEpilogue}) {
      for (const IOp& op : g_.ops(sec)) {
        for (int s : op.outputs) written.insert(S(s).pointer);
        for (int s : op.inputs) read.insert(S(s).pointer);
      }
    }
    for (int p : written) {
      if (read.count(p) != 0 && place_[static_cast<size_t>(p)] == Place::kGlobal)
        reread_dram_.insert(p);
    }
  }
  int64_t Bytes(int p) const {
    const igraph::IPointer& ptr = g_.pointers()[static_cast<size_t>(p)];
    return ptr.size * StorageBytes(ptr.dtype);
  }
  void Layout(GpuLaunch& launch) {
    const int64_t units = g_.hardware().num_unit;
    int64_t shared = 0, lane = 0;
    offset_.assign(place_.size(), 0);
    for (size_t p = 0; p < place_.size(); ++p) {
      const int64_t bytes = Bytes(static_cast<int>(p));
      switch (place_[p]) {
        case Place::kGlobal:
          ++launch.params;
          break;
        case Place::kBlock:
          offset_[p] = shared;
          shared += (bytes + 15) / 16 * 16;
          break;
        case Place::kWarp:
          offset_[p] = shared;
          shared += (bytes + 15) / 16 * 16 * units;
          break;
        case Place::kLane:
          lane +=
              (g_.pointers()[p].size + kWarp - 1) / kWarp * StorageBytes(g_.pointers()[p].dtype);
          break;
      }
    }
    if (shared > g_.hardware().sram_bytes) {
      Unsupported("iGraph " + g_.name() + " needs " + std::to_string(shared) +
                  " bytes of shared memory per block; the GPU model has " +
                  std::to_string(g_.hardware().sram_bytes));
    }
    launch.shared_bytes = shared;
    launch.lane_bytes = lane;
  }

  // --- The function ----------------------------------------------------------
  void MakeFunction(const std::string& name, int64_t params) {
    std::vector<llvm::Type*> types;
    if (ptx_) {
      types.assign(static_cast<size_t>(params), b_.getPtrTy(kGlobalSpace));
    } else {
      types.assign(3, b_.getPtrTy());
    }
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), types, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, m_);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
  }
  void Annotate(const GpuLaunch& launch) {
    llvm::NamedMDNode* md = m_.getOrInsertNamedMetadata("nvvm.annotations");
    auto entry = [&](const char* key, int64_t value) {
      md->addOperand(llvm::MDNode::get(
          ctx_, {llvm::ValueAsMetadata::get(fn_), llvm::MDString::get(ctx_, key),
                 llvm::ConstantAsMetadata::get(b_.getInt32(static_cast<uint32_t>(value)))}));
    };
    entry("kernel", 1);
    entry("maxntidx", launch.block);
  }
  // A call of an external function has no GPU form (no libdevice).
  void CheckCalls() {
    using I = llvm::Intrinsic::IndependentIntrinsics;
    static const std::set<llvm::Intrinsic::ID> unlowered = {
        I::pow, I::sin, I::cos, I::exp, I::exp2, I::exp10, I::log, I::log2, I::log10};
    for (llvm::BasicBlock& block : *fn_) {
      for (llvm::Instruction& inst : block) {
        auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
        if (call == nullptr) continue;
        llvm::Function* f = call->getCalledFunction();
        if (f == nullptr) continue;
        const bool intrinsic = f->isIntrinsic();
        if ((!intrinsic && f->isDeclaration()) ||
            (intrinsic && unlowered.count(f->getIntrinsicID()) != 0)) {
          Unsupported("iGraph " + g_.name() + ": " + f->getName().str() +
                      " has no GPU form yet (no NVPTX lowering)");
        }
      }
    }
  }

  llvm::Value* I64(int64_t v) { return b_.getInt64(v); }
  llvm::Value* Sreg(llvm::Intrinsic::ID id) {
    return b_.CreateZExt(b_.CreateIntrinsic(id, {}, {}), b_.getInt64Ty());
  }

  void Body() {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry);
    llvm::Value* tid = nullptr;
    llvm::Value* ctaid = nullptr;
    if (ptx_) {
      tid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
      ctaid = Sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
      auto* array = llvm::ArrayType::get(b_.getInt8Ty(), 0);
      llvm::GlobalVariable* shared = m_.getNamedGlobal("uir_shared");
      if (shared == nullptr) {
        shared = new llvm::GlobalVariable(m_, array, false, llvm::GlobalValue::ExternalLinkage,
                                          nullptr, "uir_shared", nullptr,
                                          llvm::GlobalValue::NotThreadLocal, kSharedSpace);
        shared->setAlignment(llvm::Align(16));
      }
      shared_ = shared;
    } else {
      sim_ = fn_->getArg(2);
      tid = b_.CreateLoad(b_.getInt64Ty(), sim_);
      ctaid =
          b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sim_, 1));
      shared_ = fn_->getArg(1);
    }
    tid_ = tid;
    lane_ = b_.CreateAnd(tid, I64(kWarp - 1));
    llvm::Value* warp = b_.CreateLShr(tid, I64(5));
    llvm::Value* pid = b_.CreateAdd(b_.CreateMul(ctaid, I64(g_.hardware().num_unit)), warp);
    active_ = b_.CreateICmpULT(pid, I64(g_.num_parallel()));
    pid_ = pid;
    // Base addresses.
    int dram = 0;
    for (size_t p = 0; p < place_.size(); ++p) {
      const igraph::IPointer& ptr = g_.pointers()[p];
      s_.StorageType(ptr.dtype);  // refuses types without a machine form
      llvm::Value* base = nullptr;
      switch (place_[p]) {
        case Place::kGlobal:
          if (ptx_) {
            base = fn_->getArg(static_cast<unsigned>(dram++));
          } else {
            base = b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(
                                                    b_.getPtrTy(), fn_->getArg(0), dram++));
          }
          break;
        case Place::kBlock:
          base = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), shared_, offset_[p]);
          break;
        case Place::kWarp: {
          const int64_t stride = (Bytes(static_cast<int>(p)) + 15) / 16 * 16;
          base =
              b_.CreateInBoundsGEP(b_.getInt8Ty(), shared_,
                                   b_.CreateAdd(I64(offset_[p]), b_.CreateMul(warp, I64(stride))));
          break;
        }
        case Place::kLane: {
          const int64_t slots = (ptr.size + kWarp - 1) / kWarp;
          base = b_.CreateAlloca(
              llvm::ArrayType::get(s_.StorageType(ptr.dtype), static_cast<uint64_t>(slots)));
          break;
        }
      }
      bases_.push_back(base);
    }
    vars_.assign(g_.vars().size(), I64(0));
    SetDigits(pid, /*parallel=*/true);
    EmitSection(Section::kPrologue);
    RuntimeLoop(g_.num_loop(), [&](llvm::Value* lid) {
      SetDigits(lid, /*parallel=*/false);
      EmitSection(Section::kBody);
    });
    EmitSection(Section::kEpilogue);
    b_.CreateRetVoid();
  }

  void SetDigits(llvm::Value* id, bool parallel) { SetIndexDigits(b_, g_, id, parallel, vars_); }

  // --- Control ---------------------------------------------------------------
  void RuntimeLoop(int64_t n, const std::function<void(llvm::Value*)>& body) {
    if (n <= 0) return;
    if (n == 1) {
      body(I64(0));
      return;
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "loop.exit", fn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
    i->addIncoming(I64(0), pre);
    body(i);
    llvm::Value* next = b_.CreateNUWAdd(i, I64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(next, I64(n)), loop, exit);
    b_.SetInsertPoint(exit);
  }
  // [0, n): unrolled as emitted when short, else a loop.
  void For(int64_t n, const std::function<void(llvm::Value*)>& body) {
    if (n <= kUnroll) {
      for (int64_t k = 0; k < n; ++k) body(I64(k));
      return;
    }
    RuntimeLoop(n, body);
  }
  // A fold over [0, n) carrying one value.
  llvm::Value* Fold(int64_t n, llvm::Value* init,
                    const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& body) {
    if (n <= kUnroll) {
      llvm::Value* acc = init;
      for (int64_t k = 0; k < n; ++k) acc = body(I64(k), acc);
      return acc;
    }
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "fold", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "fold.exit", fn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "k");
    llvm::PHINode* acc = b_.CreatePHI(init->getType(), 2, "acc");
    i->addIncoming(I64(0), pre);
    acc->addIncoming(init, pre);
    llvm::Value* next_acc = body(i, acc);
    llvm::Value* next = b_.CreateNUWAdd(i, I64(1));
    i->addIncoming(next, b_.GetInsertBlock());
    acc->addIncoming(next_acc, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(next, I64(n)), loop, exit);
    b_.SetInsertPoint(exit);
    return next_acc;
  }
  // body() where `cond` holds; a constant true needs no branch.
  void If(llvm::Value* cond, const std::function<void()>& body) {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(cond)) {
      if (c->isOne()) body();
      return;
    }
    auto* then = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto* join = llvm::BasicBlock::Create(ctx_, "join", fn_);
    b_.CreateCondBr(cond, then, join);
    b_.SetInsertPoint(then);
    body();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  void BlockBarrier() {
    synchronizes_ = true;
    if (ptx_) {
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
    } else {
      SimCall(4, {});
    }
  }
  void WarpBarrier() {
    synchronizes_ = true;
    if (ptx_) {
      b_.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b_.getInt32(0xffffffffu)});
    } else {
      SimCall(5, {});
    }
  }
  // The simulator's function at field `field` of GpuSimThread, called with
  // (state, tid, args...).
  llvm::Value* SimCall(int field, std::vector<llvm::Value*> args) {
    llvm::Value* state =
        b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), sim_, 2));
    llvm::Value* f =
        b_.CreateLoad(b_.getPtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), sim_, field));
    std::vector<llvm::Value*> all = {state, tid_};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<llvm::Type*> types;
    for (llvm::Value* a : all) types.push_back(a->getType());
    llvm::Type* ret = field == 3 ? b_.getInt32Ty() : b_.getVoidTy();
    return b_.CreateCall(llvm::FunctionType::get(ret, types, false), f, all);
  }
  // One 32-bit shuffle: mode 0 from lane ^ arg, mode 1 from lane arg.
  llvm::Value* Shuffle32(llvm::Value* v, int mode, llvm::Value* arg) {
    synchronizes_ = true;
    arg = b_.CreateTrunc(arg, b_.getInt32Ty());
    if (ptx_) {
      const llvm::Intrinsic::ID id = mode == 0 ? llvm::Intrinsic::nvvm_shfl_sync_bfly_i32
                                               : llvm::Intrinsic::nvvm_shfl_sync_idx_i32;
      return b_.CreateIntrinsic(id, {}, {b_.getInt32(0xffffffffu), v, arg, b_.getInt32(0x1f)});
    }
    return SimCall(3, {b_.getInt32(static_cast<uint32_t>(mode)), v, arg});
  }
  // A shuffle of any compute type: through 32-bit words.
  llvm::Value* Shuffle(llvm::Value* v, int mode, llvm::Value* arg) {
    llvm::Type* t = v->getType();
    const unsigned bits = static_cast<unsigned>(m_.getDataLayout().getTypeSizeInBits(t));
    llvm::Value* word = b_.CreateBitCast(v, b_.getIntNTy(bits));
    if (bits <= 32) {
      llvm::Value* r = Shuffle32(b_.CreateZExt(word, b_.getInt32Ty()), mode, arg);
      return b_.CreateBitCast(b_.CreateTrunc(r, b_.getIntNTy(bits)), t);
    }
    UIR_CHECK(bits == 64) << "a shuffle of " << bits << " bits";
    llvm::Value* lo = Shuffle32(b_.CreateTrunc(word, b_.getInt32Ty()), mode, arg);
    llvm::Value* hi =
        Shuffle32(b_.CreateTrunc(b_.CreateLShr(word, 32), b_.getInt32Ty()), mode, arg);
    llvm::Value* r = b_.CreateOr(b_.CreateZExt(lo, b_.getInt64Ty()),
                                 b_.CreateShl(b_.CreateZExt(hi, b_.getInt64Ty()), 32));
    return b_.CreateBitCast(r, t);
  }

  // --- Addresses -------------------------------------------------------------
  llvm::Value* AffineValue(const Affine& a) { return AffineAt(b_, a, vars_); }

  PrimitiveType TypeOf(int s) const { return g_.PointerOf(s).dtype; }
  llvm::Type* StorageOf(int s) { return s_.StorageType(TypeOf(s)); }
  // Element (i, j) of a slice not held in lanes.
  llvm::Value* At(int s, llvm::Value* i, llvm::Value* j) {
    UIR_CHECK(!IsLane(s)) << "At() of a lane-held slice";
    const ISlice& sl = S(s);
    llvm::Value* at = b_.CreateAdd(
        AffineValue(sl.offset),
        b_.CreateAdd(b_.CreateMul(i, I64(sl.stride[0])), b_.CreateMul(j, I64(sl.stride[1]))));
    return b_.CreateInBoundsGEP(StorageOf(s), bases_[static_cast<size_t>(sl.pointer)], at);
  }
  // Slot `k` past the first of a lane-held, dense, aligned slice: this
  // lane's element 32 k + lane of the slice.
  llvm::Value* Slot(int s, llvm::Value* k) {
    const ISlice& sl = S(s);
    llvm::Value* first = b_.CreateLShr(AffineValue(sl.offset), I64(5));
    return b_.CreateInBoundsGEP(StorageOf(s), bases_[static_cast<size_t>(sl.pointer)],
                                b_.CreateAdd(first, k));
  }
  // The lane slot of address `a` (an element index of the iPointer).
  llvm::Value* SlotOfAddress(int s, llvm::Value* a) {
    return b_.CreateInBoundsGEP(StorageOf(s), bases_[static_cast<size_t>(S(s).pointer)],
                                b_.CreateLShr(a, I64(5)));
  }
  // Element e = 32 m + lane of slice s's row-major order, which is (i, j).
  llvm::Value* Element(int s, llvm::Value* m, llvm::Value* i, llvm::Value* j) {
    return IsLane(s) ? Slot(s, m) : At(s, i, j);
  }

  // --- iOps ------------------------------------------------------------------
  void EmitSection(Section sec) {
    for (const IOp& op : g_.ops(sec)) EmitOp(op);
  }

  void EmitOp(const IOp& op) {
    if (op.kind == OpKind::kIdentity) return;
    if (op.kind == OpKind::kSync) {
      if (op.to == Level::kDram) Unsupported("a sync across every unit (dram scope) on the GPU");
      BlockBarrier();
      return;
    }
    if ((op.kind == OpKind::kReduce || op.kind == OpKind::kBroadcast) &&
        op.scope == igraph::Scope::kGroup && op.group_size > 1) {
      EmitGroupOp(op);
      return;
    }
    bool warp = false, block = false;
    for (int s : SlicesOf(op)) {
      warp = warp || PlaceOf(s) == Place::kWarp;
      block = block || PlaceOf(s) == Place::kBlock;
    }
    for (int s : op.outputs) block = block || reread_dram_.count(S(s).pointer) != 0;
    If(active_, [&] {
      switch (op.kind) {
        case OpKind::kReduce:
          if (op.axis == Axis::kRow) {
            EmitReduceRow(op);
          } else {
            EmitReduceCol(op);
          }
          break;
        case OpKind::kBroadcast:
          if (op.axis == Axis::kRow) {
            EmitBroadcastRow(op);
          } else {
            EmitBroadcastCol(op);
          }
          break;
        default:
          EmitElementwise(op);
          break;
      }
      if (warp) WarpBarrier();
    });
    if (block) BlockBarrier();
  }

  void CheckNoOverlap(const IOp& op) {
    const ISlice& os = S(op.outputs[0]);
    for (int in : op.inputs) {
      const ISlice& is = S(in);
      if (is.pointer == os.pointer && !(is.offset == os.offset && is.stride == os.stride)) {
        Unsupported("an iOp whose output overlaps its input at another place");
      }
    }
  }

  void EmitElementwise(const IOp& op) {
    CheckNoOverlap(op);
    const int out = op.outputs[0];
    const int64_t n = S(out).elements(), c = S(out).shape[1];
    const int64_t trips = (n + kWarp - 1) / kWarp;
    For(trips, [&](llvm::Value* m) {
      llvm::Value* e = b_.CreateAdd(b_.CreateMul(m, I64(kWarp)), lane_);
      // Lanes past the last element: only the last trip has any.
      llvm::Value* inside = b_.getTrue();
      if (n % kWarp != 0) {
        auto* mc = llvm::dyn_cast<llvm::ConstantInt>(m);
        if (mc == nullptr || mc->getSExtValue() == trips - 1) inside = b_.CreateICmpULT(e, I64(n));
      }
      If(inside, [&] {
        llvm::Value* i = b_.CreateUDiv(e, I64(c));
        llvm::Value* j = b_.CreateURem(e, I64(c));
        if (op.kind == OpKind::kMove) {
          llvm::Type* st = StorageOf(op.inputs[0]);
          b_.CreateStore(b_.CreateLoad(st, Element(op.inputs[0], m, i, j)), Element(out, m, i, j));
          return;
        }
        std::vector<llvm::Value*> x;
        for (int in : op.inputs) x.push_back(s_.Load(TypeOf(in), Element(in, m, i, j)));
        s_.Store(TypeOf(out), Compute(op, x, i, j), Element(out, m, i, j));
      });
    });
  }

  llvm::Value* Rounded(PrimitiveType t, llvm::Value* v) {
    return IsNarrowFloat(t) ? s_.FromStorage(t, s_.ToStorage(t, v)) : v;
  }
  llvm::Value* Combine(const IOp& op, PrimitiveType t, llvm::Value* a, llvm::Value* x) {
    return Rounded(t, s_.Reassociable(igraph::FnOpcode(op.fn), t, a, x));
  }

  // (r, c) -> (r, 1): per row, each lane folds columns lane, lane + 32, ...;
  // five butterfly shuffles give every lane the row's value.
  // Where a reduction's element `index` (its row, or its column) goes:
  // the output slice, unless `to` says otherwise (a group's partials).
  using Dest = std::function<llvm::Value*(llvm::Value* index)>;

  // Group scope (groups of group_size consecutive units, one block's):
  // reduce: each unit's partial into its slot of the sram buffer, a block
  // barrier, the leader (pid % group_size == 0) combines the group's slots
  // into its output; broadcast: the leader's value into slot 0, a block
  // barrier, every unit reads it. A block barrier ends each (the buffer is
  // used again).
  void EmitGroupOp(const IOp& op) {
    const int out = op.outputs[0], in = op.inputs[0];
    const ISlice& buffer = S(op.buffer);
    const PrimitiveType t = TypeOf(in);
    llvm::Value* k = b_.CreateURem(pid_, I64(op.group_size));
    llvm::Value* leader = b_.CreateAnd(active_, b_.CreateICmpEQ(k, I64(0)));
    llvm::Value* members = b_.CreateSub(I64(g_.num_parallel()), b_.CreateSub(pid_, k));
    auto slot_at = [&](llvm::Value* unit, int64_t slot, llvm::Value* index) {
      llvm::Value* at = b_.CreateAdd(AffineValue(buffer.offset),
                                     b_.CreateAdd(b_.CreateMul(unit, I64(slot)), index));
      return b_.CreateInBoundsGEP(StorageOf(op.buffer), bases_[static_cast<size_t>(buffer.pointer)],
                                  at);
    };
    auto elements = [&](int s,
                        const std::function<void(llvm::Value*, llvm::Value*, llvm::Value*)>& body) {
      const int64_t n = S(s).elements(), c = S(s).shape[1];
      For((n + kWarp - 1) / kWarp, [&](llvm::Value* m) {
        llvm::Value* e = b_.CreateAdd(b_.CreateMul(m, I64(kWarp)), lane_);
        If(n % kWarp == 0 ? b_.getTrue() : b_.CreateICmpULT(e, I64(n)),
           [&] { body(e, b_.CreateUDiv(e, I64(c)), b_.CreateURem(e, I64(c))); });
      });
    };
    if (op.kind == OpKind::kReduce) {
      const int64_t slot = S(out).elements();
      const Dest partial = [&](llvm::Value* index) { return slot_at(k, slot, index); };
      If(active_, [&] {
        if (op.axis == Axis::kRow) {
          EmitReduceRow(op, partial);
        } else {
          EmitReduceCol(op, partial);
        }
      });
      BlockBarrier();
      If(leader, [&] {
        elements(out, [&](llvm::Value* e, llvm::Value* i, llvm::Value* j) {
          llvm::Value* acc = s_.Load(t, slot_at(I64(0), slot, e));
          acc = Fold(op.group_size - 1, acc, [&](llvm::Value* u, llvm::Value* a) {
            llvm::Value* unit = b_.CreateAdd(u, I64(1));
            llvm::Value* next = Combine(op, t, a, s_.Load(t, slot_at(unit, slot, e)));
            return b_.CreateSelect(b_.CreateICmpULT(unit, members), next, a);
          });
          s_.Store(t, acc, At(out, i, j));
        });
        WarpBarrier();
      });
    } else {
      const int64_t slot = S(in).elements();
      If(leader, [&] {
        elements(in, [&](llvm::Value* e, llvm::Value* i, llvm::Value* j) {
          b_.CreateStore(b_.CreateLoad(StorageOf(in), At(in, i, j)), slot_at(I64(0), slot, e));
        });
      });
      BlockBarrier();
      If(active_, [&] {
        elements(out, [&](llvm::Value*, llvm::Value* i, llvm::Value* j) {
          llvm::Value* index = op.axis == Axis::kRow ? i : j;
          b_.CreateStore(b_.CreateLoad(StorageOf(in), slot_at(I64(0), slot, index)), At(out, i, j));
        });
        WarpBarrier();
      });
    }
    BlockBarrier();
  }

  void EmitReduceRow(const IOp& op, const Dest& to = nullptr) {
    CheckNoOverlap(op);
    const int out = op.outputs[0], in = op.inputs[0];
    const PrimitiveType t = TypeOf(in);
    const int64_t r = S(in).shape[0], c = S(in).shape[1];
    const int64_t trips = (c + kWarp - 1) / kWarp;
    For(r, [&](llvm::Value* i) {
      llvm::Value* acc =
          Fold(trips, ReductionStart(s_, b_, op.fn, t), [&](llvm::Value* q, llvm::Value* a) {
            llvm::Value* j = b_.CreateAdd(b_.CreateMul(q, I64(kWarp)), lane_);
            if (IsLane(in)) {  // whole rows: no lane past the end
              llvm::Value* k = b_.CreateAdd(b_.CreateMul(i, I64(c / kWarp)), q);
              return Combine(op, t, a, s_.Load(t, Slot(in, k)));
            }
            if (c % kWarp == 0) return Combine(op, t, a, s_.Load(t, At(in, i, j)));
            // Past the row's end: read its last element, keep the fold.
            llvm::Value* inside = b_.CreateICmpULT(j, I64(c));
            llvm::Value* jc = b_.CreateSelect(inside, j, I64(c - 1));
            return b_.CreateSelect(inside, Combine(op, t, a, s_.Load(t, At(in, i, jc))), a);
          });
      for (int64_t mask = kWarp / 2; mask >= 1; mask /= 2) {
        acc = Combine(op, t, acc, Shuffle(acc, 0, I64(mask)));
      }
      if (IsLane(out) && !to) {
        llvm::Value* a =
            b_.CreateAdd(AffineValue(S(out).offset), b_.CreateMul(i, I64(S(out).stride[0])));
        If(b_.CreateICmpEQ(lane_, b_.CreateAnd(a, I64(kWarp - 1))),
           [&] { s_.Store(t, acc, SlotOfAddress(out, a)); });
      } else {
        If(b_.CreateICmpEQ(lane_, I64(0)),
           [&] { s_.Store(t, acc, to ? to(i) : At(out, i, I64(0))); });
      }
    });
  }

  // (r, c) -> (1, c): lane l folds columns l, l + 32, ... down the rows.
  void EmitReduceCol(const IOp& op, const Dest& to = nullptr) {
    CheckNoOverlap(op);
    const int out = op.outputs[0], in = op.inputs[0];
    const PrimitiveType t = TypeOf(in);
    const int64_t r = S(in).shape[0], c = S(in).shape[1];
    const int64_t trips = (c + kWarp - 1) / kWarp;
    For(trips, [&](llvm::Value* q) {
      llvm::Value* j = b_.CreateAdd(b_.CreateMul(q, I64(kWarp)), lane_);
      llvm::Value* inside = c % kWarp == 0 ? b_.getTrue() : b_.CreateICmpULT(j, I64(c));
      If(inside, [&] {
        auto load = [&](llvm::Value* i) {
          if (IsLane(in))
            return s_.Load(t, Slot(in, b_.CreateAdd(b_.CreateMul(i, I64(c / kWarp)), q)));
          return s_.Load(t, At(in, i, j));
        };
        llvm::Value* acc = Fold(r - 1, load(I64(0)), [&](llvm::Value* k, llvm::Value* a) {
          return Combine(op, t, a, load(b_.CreateAdd(k, I64(1))));
        });
        s_.Store(t, acc, to ? to(j) : IsLane(out) ? Slot(out, q) : At(out, I64(0), j));
      });
    });
  }

  // (r, 1) -> (r, c): the row's value from the lane holding it (a shuffle)
  // or from memory, stored by each lane into its columns.
  void EmitBroadcastRow(const IOp& op) {
    CheckNoOverlap(op);
    const int out = op.outputs[0], in = op.inputs[0];
    const int64_t r = S(out).shape[0], c = S(out).shape[1];
    const int64_t trips = (c + kWarp - 1) / kWarp;
    llvm::Type* st = StorageOf(in);
    For(r, [&](llvm::Value* i) {
      llvm::Value* v = nullptr;
      if (IsLane(in)) {
        llvm::Value* a =
            b_.CreateAdd(AffineValue(S(in).offset), b_.CreateMul(i, I64(S(in).stride[0])));
        v = Shuffle(b_.CreateLoad(st, SlotOfAddress(in, a)), 1, b_.CreateAnd(a, I64(kWarp - 1)));
      } else {
        v = b_.CreateLoad(st, At(in, i, I64(0)));
      }
      For(trips, [&](llvm::Value* q) {
        llvm::Value* j = b_.CreateAdd(b_.CreateMul(q, I64(kWarp)), lane_);
        llvm::Value* inside = c % kWarp == 0 ? b_.getTrue() : b_.CreateICmpULT(j, I64(c));
        If(inside, [&] {
          if (IsLane(out)) {
            b_.CreateStore(v, Slot(out, b_.CreateAdd(b_.CreateMul(i, I64(c / kWarp)), q)));
          } else {
            b_.CreateStore(v, At(out, i, j));
          }
        });
      });
    });
  }

  // (1, c) -> (r, c): lane l reads columns l, l + 32, ... and stores them
  // down the rows.
  void EmitBroadcastCol(const IOp& op) {
    CheckNoOverlap(op);
    const int out = op.outputs[0], in = op.inputs[0];
    const int64_t r = S(out).shape[0], c = S(out).shape[1];
    const int64_t trips = (c + kWarp - 1) / kWarp;
    llvm::Type* st = StorageOf(in);
    For(trips, [&](llvm::Value* q) {
      llvm::Value* j = b_.CreateAdd(b_.CreateMul(q, I64(kWarp)), lane_);
      llvm::Value* inside = c % kWarp == 0 ? b_.getTrue() : b_.CreateICmpULT(j, I64(c));
      If(inside, [&] {
        llvm::Value* v = b_.CreateLoad(st, IsLane(in) ? Slot(in, q) : At(in, I64(0), j));
        For(r, [&](llvm::Value* i) {
          b_.CreateStore(v, IsLane(out)
                                ? Slot(out, b_.CreateAdd(b_.CreateMul(i, I64(c / kWarp)), q))
                                : At(out, i, j));
        });
      });
    });
  }

  llvm::Value* Compute(const IOp& op, const std::vector<llvm::Value*>& x, llvm::Value* i,
                       llvm::Value* j) {
    llvm::Value* base = op.kind == OpKind::kIota ? AffineValue(op.iota_base) : nullptr;
    return EmitIOpFunction(s_, b_, op, x, base, i, j);
  }

  const IGraph& g_;
  llvm::Module& m_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  ScalarEmitter s_{b_, m_};
  const bool ptx_;
  bool synchronizes_ = false;
  llvm::Function* fn_ = nullptr;
  llvm::Value* sim_ = nullptr;
  llvm::Value* shared_ = nullptr;
  llvm::Value* tid_ = nullptr;
  llvm::Value* lane_ = nullptr;
  llvm::Value* active_ = nullptr;
  llvm::Value* pid_ = nullptr;
  std::vector<Place> place_;
  std::vector<int64_t> offset_;  // shared-memory byte offset per iPointer
  std::set<int> reread_dram_;
  std::vector<llvm::Value*> bases_;
  std::vector<llvm::Value*> vars_;
};

}  // namespace

GpuLaunch EmitGpuKernel(const IGraph& graph, const std::string& name, llvm::Module& module,
                        GpuFlavor flavor) {
  return GpuKernelEmitter(graph, module, flavor).Emit(name);
}

}  // namespace uir::codegen
