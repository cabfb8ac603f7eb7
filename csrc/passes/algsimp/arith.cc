// algsimp, arithmetic family: identities of add, subtract, multiply, divide,
// negate, not, select, and, or, maximum, minimum, power.
#include "hlo/pattern_matcher.h"
#include "passes/algsimp/algsimp.h"

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
  const hlo::PrimitiveType t = i->shape().element_type();
  return hlo::IsInteger(t) || t == hlo::PrimitiveType::kPred;
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
  if (i->shape().element_type() != hlo::PrimitiveType::kPred) return nullptr;
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
  if (hlo::IsFloat(i->shape().element_type()) &&
      Match(i, m::Power(m::Op(), m::ConstantEffectiveScalar(-1)))) {
    HloInstruction* inverse = b.Binary(HloOpcode::kDivide, SplatLike(i, 1, b), x);
    return inverse->shape() == i->shape() ? inverse : nullptr;
  }
  return nullptr;
}

}  // namespace

const std::vector<Rule>& ArithmeticRules() {
  static const std::vector<Rule> kRules = {
      AddZero,        MultiplyOne,    MultiplyZero, SubtractSelf,
      DoubleNegation, SelectConstant, Idempotent,   PowerConstant,
  };
  return kRules;
}

}  // namespace uir::passes::algsimp
