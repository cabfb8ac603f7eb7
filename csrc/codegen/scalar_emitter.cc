// The scalar arithmetic of iOps (scalar_emitter.h).
#include "codegen/scalar_emitter.h"

#include <cstring>

#include "codegen/gpu_math.h"
#include "codegen/math.h"
#include "codegen/narrow_storage.h"
#include "llvm/IR/Intrinsics.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::codegen {

using hlo::HloOpcode;

void Unsupported(const std::string& what) { throw UnimplementedError(what); }

llvm::Type* ScalarEmitter::StorageType(PrimitiveType t) {
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
      Unsupported("no machine form for " + std::string(PrimitiveTypeName(t)));
  }
}

llvm::Type* ScalarEmitter::ComputeType(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return b_.getInt1Ty();
  if (IsSubByteInteger(t)) return b_.getIntNTy(static_cast<unsigned>(BitWidth(t)));
  if (IsNarrowFloat(t)) return b_.getFloatTy();
  return StorageType(t);
}

llvm::Value* ScalarEmitter::FromStorage(PrimitiveType t, llvm::Value* raw) {
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

llvm::Value* ScalarEmitter::ToStorage(PrimitiveType t, llvm::Value* v) {
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
      return b_.CreateTrunc(b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, rounded), b_.getInt16Ty());
    }
    default:
      return v;
  }
}

llvm::Value* ScalarEmitter::Load(PrimitiveType t, llvm::Value* address) {
  return FromStorage(t, b_.CreateLoad(StorageType(t), address));
}

void ScalarEmitter::Store(PrimitiveType t, llvm::Value* v, llvm::Value* address) {
  b_.CreateStore(ToStorage(t, v), address);
}

llvm::Value* ScalarEmitter::Constant(const hlo::Literal& literal, PrimitiveType t) {
  const PrimitiveType lt = literal.shape().element_type();
  const int bytes = StorageBytes(lt);
  uint64_t raw = 0;
  std::memcpy(&raw, literal.bytes().data(), static_cast<size_t>(bytes));
  llvm::Type* storage = StorageType(lt);
  llvm::Value* bits = llvm::ConstantInt::get(b_.getIntNTy(bytes * 8), raw);
  llvm::Value* v = FromStorage(lt, storage->isIntegerTy() ? bits : b_.CreateBitCast(bits, storage));
  return lt == t ? v : Convert(lt, t, v);
}

llvm::Value* ScalarEmitter::Reassociable(HloOpcode op, PrimitiveType t, llvm::Value* a,
                                         llvm::Value* x) {
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

llvm::Value* ScalarEmitter::Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) {
  return b_.CreateIntrinsic(id, {x->getType()}, {x});
}

llvm::Value* ScalarEmitter::Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x, llvm::Value* y) {
  return b_.CreateIntrinsic(id, {x->getType()}, {x, y});
}

llvm::Value* ScalarEmitter::Libm(const std::string& name, std::vector<llvm::Value*> args) {
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

llvm::Value* ScalarEmitter::Unary(HloOpcode op, PrimitiveType t, llvm::Value* x) {
  using I = llvm::Intrinsic::IndependentIntrinsics;
  if (gpu_ && IsFloat(t) && HasGpuMath(op)) return EmitGpuMath(b_, op, x);
  if (IsFloat(t)) {
    switch (op) {
      case HloOpcode::kAbs:
        return Intrinsic(I::fabs, x);
      case HloOpcode::kNegate:
        return b_.CreateFNeg(x);
      case HloOpcode::kSign: {
        llvm::Value* keep = b_.CreateOr(
            b_.CreateFCmpUNO(x, x), b_.CreateFCmpOEQ(x, llvm::ConstantFP::get(x->getType(), 0)));
        return b_.CreateSelect(keep, x,
                               Intrinsic(I::copysign, llvm::ConstantFP::get(x->getType(), 1.0), x));
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
        if (is_signed) return b_.CreateSelect(b_.CreateICmpSLT(x, zero), b_.CreateSub(zero, x), x);
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
  Unsupported("unary " + std::string(hlo::OpcodeName(op)) + " on " +
              std::string(PrimitiveTypeName(t)));
}

llvm::Value* ScalarEmitter::Binary(HloOpcode op, PrimitiveType t, llvm::Value* a, llvm::Value* c) {
  using I = llvm::Intrinsic::IndependentIntrinsics;
  if (gpu_ && IsFloat(t) && HasGpuMath(op)) return EmitGpuMath(b_, op, a, c);
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
  Unsupported("binary " + std::string(hlo::OpcodeName(op)) + " on " +
              std::string(PrimitiveTypeName(t)));
}

llvm::Value* ScalarEmitter::IntBinary(HloOpcode op, PrimitiveType t, llvm::Value* a,
                                      llvm::Value* c) {
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
          s ? b_.CreateAnd(b_.CreateICmpEQ(
                               a, llvm::ConstantInt::get(ty, llvm::APInt::getSignedMinValue(bits))),
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
      Unsupported("binary " + std::string(hlo::OpcodeName(op)) + " on " +
                  std::string(PrimitiveTypeName(t)));
  }
}

llvm::Value* ScalarEmitter::Compare(std::string_view direction, PrimitiveType t, llvm::Value* a,
                                    llvm::Value* c) {
  using P = llvm::CmpInst::Predicate;
  if (direction.ends_with("_total")) {
    // The total order on floats is the signed order of the bits with
    // every bit but the sign flipped on negatives (narrow floats are
    // exact in f32, their compute type).
    direction.remove_suffix(6);
    const unsigned width = a->getType()->getScalarSizeInBits();
    llvm::Type* it = llvm::IntegerType::get(b_.getContext(), width);
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

llvm::Value* ScalarEmitter::BitcastConvert(PrimitiveType from, PrimitiveType to, llvm::Value* v) {
  if (!IsRegisterBitcast(from, to)) {
    Unsupported("bitcast-convert from " + std::string(PrimitiveTypeName(from)) + " to " +
                std::string(PrimitiveTypeName(to)));
  }
  return b_.CreateBitCast(v, ComputeType(to));
}

llvm::Value* ScalarEmitter::Convert(PrimitiveType from, PrimitiveType to, llvm::Value* v) {
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

}  // namespace uir::codegen
