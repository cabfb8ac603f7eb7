// algsimp, arithmetic family: identities of add, subtract, multiply, divide,
// negate, not, select, and, or, maximum, minimum, power; reduce-precision
// written out as the bit arithmetic that defines it.
#include <cstring>

#include "hlo/pattern_matcher.h"
#include "passes/algsimp/algsimp.h"
#include "support/float_format.h"

namespace uir::passes::algsimp {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Match;
namespace m = hlo::m;

// `x` if it can stand in for `inst` (same shape, layout included).
HloInstruction* Same(HloInstruction* x, const HloInstruction* inst) {
  return x != nullptr && x->shape() == inst->shape() ? x : nullptr;
}

bool IsIntegral(const HloInstruction* i) {
  const PrimitiveType t = i->shape().element_type();
  return IsInteger(t) || t == PrimitiveType::kPred;
}

// x + 0, 0 + x, x - 0 -> x  (as XLA does; for floats, -0 + 0 gives +0).
HloInstruction* AddZero(HloInstruction* i, hlo::ComputationBuilder&) {
  HloInstruction* x = nullptr;
  if (Match(i, m::AnyOrder(HloOpcode::kAdd, m::Op(&x), m::ConstantEffectiveScalar(0))) ||
      Match(i, m::Subtract(m::Op(&x), m::ConstantEffectiveScalar(0)))) {
    return Same(x, i);
  }
  return nullptr;
}

// x * 1, 1 * x, x / 1 -> x.
HloInstruction* MultiplyOne(HloInstruction* i, hlo::ComputationBuilder&) {
  HloInstruction* x = nullptr;
  if (Match(i, m::AnyOrder(HloOpcode::kMultiply, m::Op(&x), m::ConstantEffectiveScalar(1))) ||
      Match(i, m::Divide(m::Op(&x), m::ConstantEffectiveScalar(1)))) {
    return Same(x, i);
  }
  return nullptr;
}

// Integer x * 0 -> 0 (floats keep it: NaN and infinity times 0 are NaN).
HloInstruction* MultiplyZero(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (!IsIntegral(i)) return nullptr;
  HloInstruction* zero = nullptr;
  if (Match(i, m::AnyOrder(HloOpcode::kMultiply, m::Op(), m::ConstantEffectiveScalar(0, &zero)))) {
    return zero->shape() == i->shape() ? zero : SplatLike(i, 0, b);
  }
  return nullptr;
}

// Integer x - x -> 0.
HloInstruction* SubtractSelf(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kSubtract || !IsIntegral(i) || i->operand(0) != i->operand(1))
    return nullptr;
  return SplatLike(i, 0, b);
}

// -(-x) -> x, not(not(x)) -> x.
HloInstruction* DoubleNegation(HloInstruction* i, hlo::ComputationBuilder&) {
  HloInstruction* x = nullptr;
  if (Match(i, m::Negate(m::Negate(m::Op(&x)))) || Match(i, m::Not(m::Not(m::Op(&x))))) {
    return Same(x, i);
  }
  return nullptr;
}

// select(true, a, b) -> a; select(false, a, b) -> b; select(p, a, a) -> a.
HloInstruction* SelectConstant(HloInstruction* i, hlo::ComputationBuilder&) {
  if (i->opcode() != HloOpcode::kSelect) return nullptr;
  if (i->operand(1) == i->operand(2)) return Same(i->operand(1), i);
  if (hlo::IsConstantWithValue(*i->operand(0), 1)) return Same(i->operand(1), i);
  if (hlo::IsConstantWithValue(*i->operand(0), 0)) return Same(i->operand(2), i);
  return nullptr;
}

// and(x, x), or(x, x), max(x, x), min(x, x) -> x; and(x, true), or(x, false) -> x.
HloInstruction* Idempotent(HloInstruction* i, hlo::ComputationBuilder&) {
  const HloOpcode op = i->opcode();
  if (op != HloOpcode::kAnd && op != HloOpcode::kOr && op != HloOpcode::kMaximum &&
      op != HloOpcode::kMinimum) {
    return nullptr;
  }
  if (i->operand(0) == i->operand(1)) return Same(i->operand(0), i);
  if (i->shape().element_type() != PrimitiveType::kPred) return nullptr;
  HloInstruction* x = nullptr;
  if (Match(i, m::AnyOrder(HloOpcode::kAnd, m::Op(&x), m::ConstantEffectiveScalar(1))) ||
      Match(i, m::AnyOrder(HloOpcode::kOr, m::Op(&x), m::ConstantEffectiveScalar(0)))) {
    return Same(x, i);
  }
  return nullptr;
}

// Powers by small constants, as XLA rewrites them: x ** 1 -> x, x ** 2 ->
// x * x, and for floats x ** -1 -> 1 / x (a multiply or divide instead of a
// call of pow per element).
HloInstruction* PowerConstant(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kPower) return nullptr;
  HloInstruction* x = i->operand(0);
  if (Match(i, m::Power(m::Op(), m::ConstantEffectiveScalar(1)))) return Same(x, i);
  if (Match(i, m::Power(m::Op(), m::ConstantEffectiveScalar(2)))) {
    HloInstruction* square = b.Binary(HloOpcode::kMultiply, x, x);
    return square->shape() == i->shape() ? square : nullptr;
  }
  if (IsFloat(i->shape().element_type()) &&
      Match(i, m::Power(m::Op(), m::ConstantEffectiveScalar(-1)))) {
    HloInstruction* inverse = b.Binary(HloOpcode::kDivide, SplatLike(i, 1, b), x);
    return inverse->shape() == i->shape() ? inverse : nullptr;
  }
  return nullptr;
}

// reduce-precision as the integer arithmetic on its bits that defines it
// (rounding to nearest even at the new last mantissa bit, then overflow to
// infinity and underflow to zero at the new exponent range, NaN kept, or
// infinity when no mantissa bit is left), so kernels compute it like any
// elementwise chain. Narrow floats go through f32, as the op widens them.
// Exact: the same bits as the op.
HloInstruction* ReducePrecisionAsBits(HloInstruction* i, hlo::ComputationBuilder& b) {
  if (i->opcode() != HloOpcode::kReducePrecision || !i->shape().IsArray()) return nullptr;
  using P = PrimitiveType;
  const hlo::Shape& shape = i->shape();
  const P t = shape.element_type();
  const bool narrow = IsNarrowFloat(t);
  const P w = narrow ? P::kF32 : t;
  if (w != P::kF32 && w != P::kF64) return nullptr;
  const int e = static_cast<int>(i->attributes().Get<int64_t>(hlo::AttrKey::kExponentBits));
  const int m = static_cast<int>(i->attributes().Get<int64_t>(hlo::AttrKey::kMantissaBits));
  const int kMantissa = w == P::kF32 ? 23 : 52, kExponent = w == P::kF32 ? 8 : 11;
  const P u = w == P::kF32 ? P::kU32 : P::kU64;
  auto like = [&](P type) {
    hlo::Shape s = shape;
    s.set_element_type(type);
    return s;
  };
  const hlo::Shape ws = like(w), us = like(u), ps = like(P::kPred);
  auto splat = [&](uint64_t v) {
    hlo::Literal lit(hlo::Shape(u, {}));
    std::memcpy(lit.mutable_bytes().data(), &v, StorageBytes(u));
    HloInstruction* c = b.Constant(std::move(lit));
    if (shape.rank() == 0) return c;
    HloInstruction* out = b.Broadcast(c, shape.dimensions(), {});
    out->mutable_shape() = us;
    return out;
  };
  auto op = [&](HloOpcode code, std::vector<HloInstruction*> xs, const hlo::Shape& s) {
    return b.Add(code, std::move(xs), {}, s);
  };
  auto compare = [&](HloInstruction* x, HloInstruction* y, hlo::ComparisonDirection d) {
    HloInstruction* c = b.Compare(x, y, d);
    c->mutable_shape() = ps;
    return c;
  };
  HloInstruction* x = i->operand(0);
  if (narrow) x = op(HloOpcode::kConvert, {x}, ws);
  HloInstruction* bits = op(HloOpcode::kBitcastConvert, {x}, us);
  HloInstruction* original = bits;
  const uint64_t sign_mask = uint64_t{1} << (kMantissa + kExponent);
  const uint64_t exp_mask = ((uint64_t{1} << kExponent) - 1) << kMantissa;
  if (m < kMantissa) {
    const uint64_t last = uint64_t{1} << (kMantissa - m);
    HloInstruction* x_last =
        op(HloOpcode::kShiftRightLogical,
           {op(HloOpcode::kAnd, {bits, splat(last)}, us), splat(kMantissa - m)}, us);
    HloInstruction* biased =
        op(HloOpcode::kAdd, {op(HloOpcode::kAdd, {bits, x_last}, us), splat((last >> 1) - 1)}, us);
    bits = op(HloOpcode::kAnd, {biased, splat(~(last - 1))}, us);
  }
  if (e < kExponent) {
    const uint64_t bias = (uint64_t{1} << (kExponent - 1)) - 1;
    const uint64_t reduced = (uint64_t{1} << (e - 1)) - 1;
    HloInstruction* sign = op(HloOpcode::kAnd, {bits, splat(sign_mask)}, us);
    HloInstruction* exponent = op(HloOpcode::kAnd, {bits, splat(exp_mask)}, us);
    HloInstruction* over =
        compare(exponent, splat((bias + reduced) << kMantissa), hlo::ComparisonDirection::kGt);
    HloInstruction* under =
        compare(exponent, splat((bias - reduced) << kMantissa), hlo::ComparisonDirection::kLe);
    HloInstruction* inf = op(HloOpcode::kOr, {sign, splat(exp_mask)}, us);
    bits = op(HloOpcode::kSelect, {over, inf, op(HloOpcode::kSelect, {under, sign, bits}, us)}, us);
  }
  HloInstruction* nan_bits =
      m > 0 ? original
            : op(HloOpcode::kOr,
                 {op(HloOpcode::kAnd, {original, splat(sign_mask)}, us), splat(exp_mask)}, us);
  HloInstruction* is_nan = compare(x, x, hlo::ComparisonDirection::kNe);
  bits = op(HloOpcode::kSelect, {is_nan, nan_bits, bits}, us);
  HloInstruction* out = op(HloOpcode::kBitcastConvert, {bits}, ws);
  return narrow ? op(HloOpcode::kConvert, {out}, shape) : out;
}

}  // namespace

const std::vector<Rule>& ArithmeticRules() {
  static const std::vector<Rule> kRules = {
      AddZero,        MultiplyOne, MultiplyZero,  SubtractSelf,          DoubleNegation,
      SelectConstant, Idempotent,  PowerConstant, ReducePrecisionAsBits,
  };
  return kRules;
}

}  // namespace uir::passes::algsimp
