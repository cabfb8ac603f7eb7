// The GPU's forms of the functions the CPU takes from the C library (a GPU
// has none, and without the CUDA toolkit there is no libdevice): built from
// arithmetic, compares, selects and uir's own exp and log, so NVPTX lowers
// them. f32 (and the narrow floats computed in f32) only: each is computed
// in double, where plain polynomials and identities are far more accurate
// than f32 needs (the GPUs uir targets run double at half the float rate),
// then rounded once. Accuracy against float64 references:
// tests/codegen/test_gpu.py::test_gpu_math_ulps.
#include "codegen/gpu_math.h"

#include <array>
#include <cmath>

#include "codegen/math.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

using hlo::HloOpcode;
using I = llvm::Intrinsic::IndependentIntrinsics;

// 2/pi in 32-bit words after a word of zeros: bit i of 2/pi (i >= 1, bit 1
// the first after the point) is bit (i + 31) from the top of the table.
constexpr std::array<uint32_t, 10> kTwoOverPi = {0x00000000, 0xA2F9836E, 0x4E441529, 0xFC2757D1,
                                                 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB,
                                                 0xDEBBC561, 0xB7246E3A};
// pi/2 = C1 + C2 + C3, C1 and C2 of 33 significant bits: k * C1 and k * C2
// are exact for |k| < 2^20.
constexpr double kC1 = 0x1.921fb544p+0;
constexpr double kC2 = 0x1.0b4611a6p-34;
constexpr double kC3 = 0x1.3198a2e037073p-69;
constexpr double kPi = 3.141592653589793;
constexpr double kHalfPi = 1.5707963267948966;

class GpuMath {
 public:
  explicit GpuMath(llvm::IRBuilder<>& b) : b_(b) {}

  llvm::Value* D(double v) { return llvm::ConstantFP::get(b_.getDoubleTy(), v); }
  llvm::Value* Wide(llvm::Value* x) { return b_.CreateFPExt(x, b_.getDoubleTy()); }
  llvm::Value* Narrow(llvm::Value* d) { return b_.CreateFPTrunc(d, b_.getFloatTy()); }
  llvm::Value* Fma(llvm::Value* a, llvm::Value* x, llvm::Value* c) {
    return b_.CreateIntrinsic(I::fma, {a->getType()}, {a, x, c});
  }
  llvm::Value* Abs(llvm::Value* x) { return b_.CreateIntrinsic(I::fabs, {x->getType()}, {x}); }
  llvm::Value* Sqrt(llvm::Value* x) { return b_.CreateIntrinsic(I::sqrt, {x->getType()}, {x}); }
  llvm::Value* CopySign(llvm::Value* mag, llvm::Value* sign) {
    return b_.CreateIntrinsic(I::copysign, {mag->getType()}, {mag, sign});
  }
  // c[0] + c[1] u + c[2] u^2 + ... (Horner).
  llvm::Value* Poly(llvm::Value* u, const std::vector<double>& c) {
    llvm::Value* acc = D(c.back());
    for (size_t k = c.size() - 1; k-- > 0;) acc = Fma(acc, u, D(c[k]));
    return acc;
  }
  llvm::Value* Nan(llvm::Type* t) { return llvm::ConstantFP::getNaN(t); }
  llvm::Value* IsNan(llvm::Value* x) { return b_.CreateFCmpUNO(x, x); }
  llvm::Value* IsFinite(llvm::Value* x) {
    return b_.CreateFCmpOLT(Abs(x), llvm::ConstantFP::getInfinity(x->getType()));
  }

  // sin r and cos r for |r| <= pi/4 (Taylor to r^13 and r^14: < 1e-14).
  llvm::Value* SinPoly(llvm::Value* r) {
    llvm::Value* r2 = b_.CreateFMul(r, r);
    std::vector<double> c;
    double f = 1;
    for (int n = 0; n < 7; ++n) {
      c.push_back((n % 2 == 0 ? 1.0 : -1.0) / f);
      f *= (2 * n + 2) * (2 * n + 3);
    }
    return b_.CreateFMul(r, Poly(r2, c));
  }
  llvm::Value* CosPoly(llvm::Value* r) {
    llvm::Value* r2 = b_.CreateFMul(r, r);
    std::vector<double> c;
    double f = 1;
    for (int n = 0; n < 8; ++n) {
      c.push_back((n % 2 == 0 ? 1.0 : -1.0) / f);
      f *= (2 * n + 1) * (2 * n + 2);
    }
    return Poly(r2, c);
  }

  // x = j pi/2 + r, |r| <= pi/4 (a little more for huge x), r in double:
  // by three parts of pi/2 below 2^20, else exactly from x's integer
  // significand times a 128-bit window of 2/pi (Payne and Hanek).
  std::pair<llvm::Value*, llvm::Value*> Reduce(llvm::Value* x) {
    llvm::Type* i32 = b_.getInt32Ty();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* i128 = b_.getInt128Ty();
    llvm::Value* d = Wide(x);
    llvm::Value* k =
        b_.CreateIntrinsic(I::rint, {b_.getDoubleTy()}, {b_.CreateFMul(d, D(2 / kPi))});
    llvm::Value* nk = b_.CreateFNeg(k);
    llvm::Value* r_small = Fma(nk, D(kC3), Fma(nk, D(kC2), Fma(nk, D(kC1), d)));
    llvm::Value* j_small = b_.CreateFPToSI(k, i32);

    llvm::Value* bits = b_.CreateBitCast(x, i32);
    llvm::Value* e = b_.CreateAnd(b_.CreateLShr(bits, 23), 0xff);
    llvm::Value* m = b_.CreateOr(b_.CreateAnd(bits, 0x7fffff), 0x800000);
    // Exponents below the large path's are clamped: its result is unused.
    llvm::Value* ec = b_.CreateSelect(b_.CreateICmpULT(e, b_.getInt32(147)), b_.getInt32(147), e);
    llvm::Value* p0 = b_.CreateSub(ec, b_.getInt32(120));  // (e - 150) - 1 + 31
    llvm::Value* w = b_.CreateLShr(p0, 5);
    llvm::Value* o = b_.CreateAnd(p0, 31);
    llvm::Module* module = b_.GetInsertBlock()->getModule();
    llvm::GlobalVariable* table = module->getNamedGlobal("uir_two_over_pi");
    if (table == nullptr) {
      std::vector<llvm::Constant*> words;
      for (uint32_t v : kTwoOverPi) words.push_back(b_.getInt32(v));
      auto* type = llvm::ArrayType::get(i32, kTwoOverPi.size());
      // On a GPU, in its global memory (address space 1).
      const unsigned space = module->getTargetTriple().find("nvptx") != std::string::npos ? 1 : 0;
      table = new llvm::GlobalVariable(*module, type, true, llvm::GlobalValue::InternalLinkage,
                                       llvm::ConstantArray::get(type, words), "uir_two_over_pi",
                                       nullptr, llvm::GlobalValue::NotThreadLocal, space);
    }
    auto word = [&](int k) {
      llvm::Value* at = b_.CreateAdd(w, b_.getInt32(static_cast<uint32_t>(k)));
      llvm::Value* p = b_.CreateInBoundsGEP(table->getValueType(), table, {b_.getInt32(0), at});
      return b_.CreateLoad(i32, p);
    };
    llvm::Value* a = b_.getIntN(128, 0);
    for (int q = 0; q < 4; ++q) {
      a = b_.CreateOr(b_.CreateShl(a, 32), b_.CreateZExt(word(q), i128));
    }
    llvm::Value* low = b_.CreateLShr(b_.CreateZExt(word(4), i64),
                                     b_.CreateZExt(b_.CreateSub(b_.getInt32(32), o), i64));
    llvm::Value* window =
        b_.CreateOr(b_.CreateShl(a, b_.CreateZExt(o, i128)), b_.CreateZExt(low, i128));
    llvm::Value* z = b_.CreateMul(b_.CreateZExt(m, i128), window);
    llvm::Value* j = b_.CreateTrunc(b_.CreateLShr(z, 126), i32);
    llvm::Value* f = b_.CreateTrunc(b_.CreateLShr(b_.CreateShl(z, 2), 64), i64);
    // The fraction's top 64 bits as a signed number: past one half, the
    // nearest quadrant is the next one and the fraction negative.
    j = b_.CreateAdd(j, b_.CreateZExt(b_.CreateICmpSLT(f, b_.getInt64(0)), i32));
    llvm::Value* r_large =
        b_.CreateFMul(b_.CreateSIToFP(f, b_.getDoubleTy()), D(std::ldexp(kHalfPi, -64)));
    llvm::Value* negative = b_.CreateICmpSLT(bits, b_.getInt32(0));
    r_large = b_.CreateSelect(negative, b_.CreateFNeg(r_large), r_large);
    j = b_.CreateSelect(negative, b_.CreateNeg(j), j);
    llvm::Value* small = b_.CreateFCmpOLT(Abs(x), llvm::ConstantFP::get(x->getType(), 1048576.0));
    return {b_.CreateSelect(small, r_small, r_large), b_.CreateSelect(small, j_small, j)};
  }

  // sin (kind 0), cos (1) or tan (2) of f32 x.
  llvm::Value* Trig(int kind, llvm::Value* x) {
    auto [r, j] = Reduce(x);
    if (kind == 1) j = b_.CreateAdd(j, b_.getInt32(1));
    llvm::Value* s = SinPoly(r);
    llvm::Value* c = CosPoly(r);
    llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(j, 1), b_.getInt32(0));
    llvm::Value* v = nullptr;
    if (kind == 2) {
      v = b_.CreateSelect(odd, b_.CreateFNeg(b_.CreateFDiv(c, s)), b_.CreateFDiv(s, c));
    } else {
      v = b_.CreateSelect(odd, c, s);
      v = b_.CreateSelect(b_.CreateICmpNE(b_.CreateAnd(j, 2), b_.getInt32(0)), b_.CreateFNeg(v), v);
    }
    llvm::Value* out = Narrow(v);
    // Tiny arguments: sin x = tan x = x (keeping -0), cos x = 1.
    llvm::Value* tiny = b_.CreateFCmpOLT(Abs(x), llvm::ConstantFP::get(x->getType(), 0x1p-12));
    out = b_.CreateSelect(tiny, kind == 1 ? llvm::ConstantFP::get(x->getType(), 1.0) : x, out);
    return b_.CreateSelect(IsFinite(x), out, Nan(x->getType()));
  }

  // atan t for t >= 0 (inf included), in double.
  llvm::Value* AtanD(llvm::Value* t) {
    llvm::Value* inv = b_.CreateFCmpOGT(t, D(1));
    llvm::Value* a = b_.CreateSelect(inv, b_.CreateFDiv(D(1), t), t);
    llvm::Value* mid = b_.CreateFCmpOGT(a, D(0.41421356237309503));
    llvm::Value* u =
        b_.CreateSelect(mid, b_.CreateFDiv(b_.CreateFSub(a, D(1)), b_.CreateFAdd(a, D(1))), a);
    std::vector<double> c;
    for (int n = 0; n < 14; ++n) c.push_back((n % 2 == 0 ? 1.0 : -1.0) / (2 * n + 1));
    llvm::Value* p = b_.CreateFMul(u, Poly(b_.CreateFMul(u, u), c));
    p = b_.CreateSelect(mid, b_.CreateFAdd(D(kPi / 4), p), p);
    return b_.CreateSelect(inv, b_.CreateFSub(D(kHalfPi), p), p);
  }

  // atan2(y, x) in double, with C's signed zeros and infinities.
  llvm::Value* Atan2D(llvm::Value* y, llvm::Value* x) {
    llvm::Value* ay = Abs(y);
    llvm::Value* ax = Abs(x);
    llvm::Value* inf = llvm::ConstantFP::getInfinity(b_.getDoubleTy());
    llvm::Value* both_inf = b_.CreateAnd(b_.CreateFCmpOEQ(ay, inf), b_.CreateFCmpOEQ(ax, inf));
    llvm::Value* above = b_.CreateFCmpOGT(ay, ax);
    llvm::Value* big = b_.CreateSelect(above, ay, ax);
    llvm::Value* small = b_.CreateSelect(above, ax, ay);
    llvm::Value* t = b_.CreateSelect(b_.CreateFCmpOEQ(big, D(0)), D(0), b_.CreateFDiv(small, big));
    t = b_.CreateSelect(both_inf, D(1), t);
    llvm::Value* a = AtanD(t);
    a = b_.CreateSelect(above, b_.CreateFSub(D(kHalfPi), a), a);
    llvm::Value* x_negative =
        b_.CreateICmpSLT(b_.CreateBitCast(x, b_.getInt64Ty()), b_.getInt64(0));
    a = b_.CreateSelect(x_negative, b_.CreateFSub(D(kPi), a), a);
    a = CopySign(a, y);
    return b_.CreateSelect(b_.CreateOr(IsNan(x), IsNan(y)), Nan(b_.getDoubleTy()), a);
  }

  llvm::Value* Cbrt(llvm::Value* x) {
    llvm::Value* a = Abs(Wide(x));
    llvm::Value* y = EmitExp(b_, b_.CreateFMul(EmitLog(b_, a), D(1.0 / 3)));
    // One Newton step: y - (y^3 - a) / (3 y^2).
    llvm::Value* y2 = b_.CreateFMul(y, y);
    llvm::Value* step =
        b_.CreateFDiv(b_.CreateFSub(b_.CreateFMul(y2, y), a), b_.CreateFMul(D(3), y2));
    llvm::Value* ok = b_.CreateAnd(b_.CreateFCmpOGT(y, D(0)), IsFinite(y));
    y = b_.CreateSelect(ok, b_.CreateFSub(y, step), y);
    return CopySign(Narrow(y), x);
  }

  llvm::Value* Erf(llvm::Value* x) {
    llvm::Value* d = Wide(x);
    llvm::Value* z = Abs(d);
    // |x| < 1: the Taylor series, 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)).
    std::vector<double> c;
    double f = 1;
    for (int n = 0; n < 14; ++n) {
      c.push_back((n % 2 == 0 ? 1.0 : -1.0) / (f * (2 * n + 1)) * 1.1283791670955126);
      f *= n + 1;
    }
    llvm::Value* series = b_.CreateFMul(d, Poly(b_.CreateFMul(d, d), c));
    // Else 1 - erfc, erfc by a Chebyshev fit of relative error 1.2e-7
    // (Numerical Recipes' erfcc), which is below f32's half ulp of erf.
    llvm::Value* t = b_.CreateFDiv(D(1), Fma(D(0.5), z, D(1)));
    llvm::Value* p = Poly(t, {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                              0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277});
    llvm::Value* erfc = b_.CreateFMul(t, EmitExp(b_, b_.CreateFSub(p, b_.CreateFMul(z, z))));
    llvm::Value* tail = CopySign(b_.CreateFSub(D(1), erfc), d);
    llvm::Value* v = b_.CreateSelect(b_.CreateFCmpOLT(z, D(1)), series, tail);
    return Narrow(b_.CreateSelect(IsNan(d), d, v));
  }

  // C's pow for f32, computed in double: exp(y log|x|) with the sign of an
  // odd integer power of a negative base and C's special cases.
  llvm::Value* Pow(llvm::Value* x, llvm::Value* y) {
    llvm::Value* dx = Wide(x);
    llvm::Value* dy = Wide(y);
    llvm::Value* ax = Abs(dx);
    llvm::Value* mag = EmitExp(b_, b_.CreateFMul(dy, EmitLog(b_, ax)));
    // y * log|x| is NaN for 0 * inf (|x| = 1, y = inf): 1 is C's answer.
    mag = b_.CreateSelect(b_.CreateFCmpOEQ(ax, D(1)), D(1), mag);
    llvm::Value* integer =
        b_.CreateFCmpOEQ(b_.CreateIntrinsic(I::trunc, {b_.getDoubleTy()}, {dy}), dy);
    llvm::Value* half = b_.CreateFMul(dy, D(0.5));
    llvm::Value* odd = b_.CreateAnd(
        integer, b_.CreateFCmpONE(b_.CreateIntrinsic(I::trunc, {b_.getDoubleTy()}, {half}), half));
    llvm::Value* negative = b_.CreateICmpSLT(b_.CreateBitCast(dx, b_.getInt64Ty()), b_.getInt64(0));
    llvm::Value* v = b_.CreateSelect(b_.CreateAnd(negative, odd), b_.CreateFNeg(mag), mag);
    // A negative finite base to a non-integer power: NaN.
    llvm::Value* bad = b_.CreateAnd(b_.CreateAnd(negative, b_.CreateNot(integer)),
                                    b_.CreateAnd(IsFinite(dx), b_.CreateFCmpONE(dx, D(0))));
    v = b_.CreateSelect(bad, Nan(b_.getDoubleTy()), v);
    // pow(x, 0) = 1 and pow(1, y) = 1, NaNs included.
    v = b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOEQ(dy, D(0)), b_.CreateFCmpOEQ(dx, D(1))), D(1),
                        v);
    return Narrow(v);
  }

  llvm::Value* Unary(HloOpcode op, llvm::Value* x) {
    switch (op) {
      case HloOpcode::kSin:
        return Trig(0, x);
      case HloOpcode::kCos:
        return Trig(1, x);
      case HloOpcode::kTan:
        return Trig(2, x);
      case HloOpcode::kCbrt:
        return Cbrt(x);
      case HloOpcode::kErf:
        return Erf(x);
      default:
        break;
    }
    llvm::Value* d = Wide(x);
    llvm::Value* a = Abs(d);
    switch (op) {
      case HloOpcode::kSinh: {  // (E + E / (E + 1)) / 2, E = expm1|x|
        llvm::Value* e = EmitExpm1(b_, a);
        llvm::Value* v =
            b_.CreateFMul(D(0.5), b_.CreateFAdd(e, b_.CreateFDiv(e, b_.CreateFAdd(e, D(1)))));
        // Past double's range of E + 1 the quotient is inf / inf.
        v = b_.CreateSelect(b_.CreateFCmpOGT(a, D(700)),
                            llvm::ConstantFP::getInfinity(b_.getDoubleTy()), v);
        return Narrow(CopySign(b_.CreateSelect(IsNan(d), d, v), d));
      }
      case HloOpcode::kCosh: {
        llvm::Value* e = EmitExp(b_, a);
        return Narrow(b_.CreateFMul(D(0.5), b_.CreateFAdd(e, b_.CreateFDiv(D(1), e))));
      }
      case HloOpcode::kAsinh: {  // log1p(a + a^2 / (1 + sqrt(1 + a^2)))
        llvm::Value* a2 = b_.CreateFMul(a, a);
        llvm::Value* v = EmitLog1p(
            b_, b_.CreateFAdd(
                    a, b_.CreateFDiv(a2, b_.CreateFAdd(D(1), Sqrt(b_.CreateFAdd(D(1), a2))))));
        v = b_.CreateSelect(IsFinite(a), v, a);  // inf / inf above
        return Narrow(CopySign(v, d));
      }
      case HloOpcode::kAcosh:  // log(x + sqrt((x - 1)(x + 1)))
        return Narrow(EmitLog(b_, b_.CreateFAdd(d, Sqrt(b_.CreateFMul(b_.CreateFSub(d, D(1)),
                                                                      b_.CreateFAdd(d, D(1)))))));
      case HloOpcode::kAtanh:  // log1p(2x / (1 - x)) / 2
        return Narrow(b_.CreateFMul(
            D(0.5), EmitLog1p(b_, b_.CreateFDiv(b_.CreateFMul(D(2), d), b_.CreateFSub(D(1), d)))));
      case HloOpcode::kAsin:  // atan2(x, sqrt((1 - x)(1 + x)))
        return Narrow(
            Atan2D(d, Sqrt(b_.CreateFMul(b_.CreateFSub(D(1), d), b_.CreateFAdd(D(1), d)))));
      case HloOpcode::kAcos:
        return Narrow(
            Atan2D(Sqrt(b_.CreateFMul(b_.CreateFSub(D(1), d), b_.CreateFAdd(D(1), d))), d));
      default:
        return nullptr;
    }
  }

 private:
  llvm::IRBuilder<>& b_;
};

}  // namespace

bool HasGpuMath(HloOpcode op) {
  switch (op) {
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kCbrt:
    case HloOpcode::kErf:
    case HloOpcode::kSinh:
    case HloOpcode::kCosh:
    case HloOpcode::kAsinh:
    case HloOpcode::kAcosh:
    case HloOpcode::kAtanh:
    case HloOpcode::kAsin:
    case HloOpcode::kAcos:
    case HloOpcode::kAtan2:
    case HloOpcode::kPower:
      return true;
    default:
      return false;
  }
}

llvm::Value* EmitGpuMath(llvm::IRBuilder<>& b, HloOpcode op, llvm::Value* x, llvm::Value* y) {
  if (!HasGpuMath(op)) return nullptr;
  if (!x->getType()->isFloatTy()) {
    throw UnimplementedError(std::string(hlo::OpcodeName(op)) +
                             " on f64 has no GPU form yet (f32 and narrower only)");
  }
  GpuMath m(b);
  if (op == HloOpcode::kAtan2) return m.Narrow(m.Atan2D(m.Wide(x), m.Wide(y)));
  if (op == HloOpcode::kPower) return m.Pow(x, y);
  return m.Unary(op, x);
}

}  // namespace uir::codegen
