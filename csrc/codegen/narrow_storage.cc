// f8, f6 and f4 values in kernels: a table to read, integer rounding to write.
#include "codegen/narrow_storage.h"

#include <cmath>
#include <string>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "support/float_format.h"

namespace uir::codegen {

bool IsByteFloat(PrimitiveType t) {
  return IsNarrowFloat(t) && t != PrimitiveType::kF16 && t != PrimitiveType::kBF16 &&
         FormatOf(t).nan != NanEncoding::kAllOnesU;
}

llvm::Value* EmitDecodeByteFloat(llvm::IRBuilder<>& b, PrimitiveType t, llvm::Value* raw) {
  const int bits = FormatOf(t).total_bits();
  llvm::Module& m = *b.GetInsertBlock()->getModule();
  const std::string name = "decode." + std::string(PrimitiveTypeName(t));
  llvm::GlobalVariable* table = m.getNamedGlobal(name);
  if (table == nullptr) {
    std::vector<float> values(size_t{1} << bits);
    for (size_t i = 0; i < values.size(); ++i) {
      values[i] = DecodeNarrowFloat(t, static_cast<uint32_t>(i));
    }
    llvm::Constant* init = llvm::ConstantDataArray::get(m.getContext(), values);
    table = new llvm::GlobalVariable(m, init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
  }
  llvm::Value* index = b.CreateZExt(
      b.CreateAnd(raw, b.getInt8(static_cast<uint8_t>((1 << bits) - 1))), b.getInt64Ty());
  llvm::Value* at = b.CreateInBoundsGEP(table->getValueType(), table, {b.getInt64(0), index});
  return b.CreateLoad(b.getFloatTy(), at);
}

llvm::Value* EmitEncodeByteFloat(llvm::IRBuilder<>& b, PrimitiveType t, llvm::Value* v) {
  const FloatFormat& f = FormatOf(t);
  const int e = f.exponent_bits, m = f.mantissa_bits, bias = f.bias;
  const int field = e + m;  // the sign's bit
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* f32 = b.getFloatTy();
  auto k = [&](int64_t x) { return llvm::ConstantInt::get(i32, static_cast<uint64_t>(x)); };
  auto real = [&](float x) { return llvm::ConstantFP::get(f32, x); };
  llvm::Value* bits = b.CreateBitCast(v, i32);
  llvm::Value* sign = b.CreateLShr(bits, 31);
  llvm::Value* mag = b.CreateAnd(bits, k(0x7fffffff));
  llvm::Value* a = b.CreateBitCast(mag, f32);
  // Normal range: the f32 bits rounded to m mantissa bits (a carry moves
  // into the exponent), the exponent rebiased.
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(mag, k(23 - m)), k(1));
  llvm::Value* rounded =
      b.CreateLShr(b.CreateAdd(mag, b.CreateAdd(lsb, k((int64_t{1} << (22 - m)) - 1))), k(23 - m));
  llvm::Value* normal = b.CreateSub(rounded, k(int64_t{127 - bias} << m));
  // Below the smallest normal: a multiple of the subnormal step.
  const float min_normal = std::ldexp(1.0f, 1 - bias);
  llvm::Value* small = b.CreateIntrinsic(llvm::Intrinsic::minnum, {f32}, {a, real(min_normal)});
  llvm::Value* steps =
      b.CreateIntrinsic(llvm::Intrinsic::roundeven, {f32},
                        {b.CreateFMul(small, real(std::ldexp(1.0f, bias - 1 + m)))});
  llvm::Value* enc =
      b.CreateSelect(b.CreateFCmpOLT(a, real(min_normal)), b.CreateFPToSI(steps, i32), normal);
  int64_t max_finite = 0, overflow = 0, nan = 0;
  switch (f.nan) {
    case NanEncoding::kIeee:
      max_finite = ((int64_t{1} << e) - 2) << m | ((int64_t{1} << m) - 1);
      overflow = ((int64_t{1} << e) - 1) << m;  // infinity
      nan = overflow | (int64_t{1} << (m - 1));
      break;
    case NanEncoding::kAllOnes:
      max_finite = (int64_t{1} << field) - 2;
      overflow = nan = (int64_t{1} << field) - 1;
      break;
    case NanEncoding::kNegZero:
      max_finite = (int64_t{1} << field) - 1;
      overflow = nan = int64_t{1} << field;  // the encoding of -0, unsigned
      break;
    default:  // kNone: no NaN, no infinity
      max_finite = overflow = (int64_t{1} << field) - 1;
      nan = 0;
      break;
  }
  enc = b.CreateSelect(b.CreateICmpSGT(enc, k(max_finite)), k(overflow), enc);
  llvm::Value* is_nan = b.CreateFCmpUNO(v, v);
  enc = b.CreateSelect(is_nan, k(nan), enc);
  llvm::Value* with_sign = b.CreateOr(enc, b.CreateShl(sign, k(field)));
  if (f.nan == NanEncoding::kNegZero) {
    // No -0, and the NaN carries no sign.
    llvm::Value* unsigned_ = b.CreateOr(b.CreateICmpEQ(enc, k(0)), b.CreateICmpEQ(enc, k(nan)));
    return b.CreateSelect(unsigned_, enc, with_sign);
  }
  if (f.nan == NanEncoding::kNone) return b.CreateSelect(is_nan, k(0), with_sign);
  return with_sign;
}

}  // namespace uir::codegen
