// A small pattern matcher for rewrite rules: a rule reads as one line,
//   if (Match(inst, m::Add(m::Op(&x), m::ConstantScalar(0)))) return x;
// Patterns are values built from functions in namespace m. Each is a
// Pattern<Impl> holding its predicate and sub-patterns by value, so building
// one allocates nothing: rules run on every instruction of every module.
// Bind pointers are set as sub-patterns match (a failed match may leave
// some set).
#ifndef UIR_HLO_PATTERN_MATCHER_H_
#define UIR_HLO_PATTERN_MATCHER_H_

#include <cstdint>
#include <tuple>
#include <utility>

#include "hlo/instruction.h"

namespace uir::hlo {

template <typename Impl>
class Pattern;

template <typename Impl>
Pattern<Impl> MakePattern(Impl impl) {
  return Pattern<Impl>(std::move(impl));
}

// `Impl` is callable as bool(HloInstruction*) on a non-null instruction.
template <typename Impl>
class Pattern {
 public:
  explicit Pattern(Impl impl) : impl_(std::move(impl)) {}
  bool Matches(HloInstruction* inst) const { return inst != nullptr && impl_(inst); }

  // Refinements, each returning a new pattern.
  auto Bind(HloInstruction** out) const {
    return MakePattern([impl = impl_, out](HloInstruction* i) {
      if (!impl(i)) return false;
      if (out != nullptr) *out = i;
      return true;
    });
  }
  template <typename Predicate>
  auto Where(Predicate extra) const {
    return MakePattern([impl = impl_, extra = std::move(extra)](HloInstruction* i) {
      return impl(i) && extra(static_cast<const HloInstruction*>(i));
    });
  }
  auto WithOneUser() const {
    return Where([](const HloInstruction* i) { return i->user_count() == 1; });
  }
  auto WithElementType(PrimitiveType type) const {
    return Where([type](const HloInstruction* i) {
      return i->shape().IsArray() && i->shape().element_type() == type;
    });
  }
  // Same dimensions and element type as `*shape` (layouts ignored).
  auto WithShapeCompatibleTo(const Shape* shape) const {
    return Where([shape](const HloInstruction* i) { return i->shape().Compatible(*shape); });
  }

 private:
  Impl impl_;
};

template <typename Impl>
bool Match(HloInstruction* inst, const Pattern<Impl>& pattern) {
  return pattern.Matches(inst);
}

// True if every element of the array constant `inst` (or of the constant
// under a chain of broadcasts) equals `value`; never for NaN.
bool IsConstantWithValue(const HloInstruction& inst, double value);
// True if `inst` is a constant, or broadcasts of one, whose elements are all
// equal.
bool IsUniformConstant(const HloInstruction& inst);

namespace m {

// Any instruction.
inline auto Op(HloInstruction** out = nullptr) {
  return MakePattern([out](HloInstruction* i) {
    if (out != nullptr) *out = i;
    return true;
  });
}

// An instruction of `opcode` whose operands match `operands` in order; with
// no operand patterns, any operand count.
template <typename... Operands>
auto Opcode(HloOpcode opcode, Operands... operands) {
  return MakePattern([opcode, ops = std::make_tuple(std::move(operands)...)](HloInstruction* i) {
    if (i->opcode() != opcode) return false;
    if constexpr (sizeof...(Operands) == 0) {
      return true;
    } else {
      if (i->operand_count() != static_cast<int64_t>(sizeof...(Operands))) return false;
      return std::apply(
          [i](const auto&... p) {
            int64_t k = 0;
            return (p.Matches(i->operand(k++)) && ...);  // && sequences left to right
          },
          ops);
    }
  });
}

// A binary op whose operands match (a, b) in either order.
template <typename A, typename B>
auto AnyOrder(HloOpcode opcode, A a, B b, HloInstruction** out = nullptr) {
  return MakePattern([opcode, a = std::move(a), b = std::move(b)](HloInstruction* i) {
           if (i->opcode() != opcode || i->operand_count() != 2) return false;
           return (a.Matches(i->operand(0)) && b.Matches(i->operand(1))) ||
                  (a.Matches(i->operand(1)) && b.Matches(i->operand(0)));
         })
      .Bind(out);
}

// A constant (any shape).
inline auto Constant(HloInstruction** out = nullptr) {
  return Opcode(HloOpcode::kConstant).Bind(out);
}
// An array whose every element equals `value`: a constant, or a broadcast of
// such a constant. Integer, float and pred types (pred: 0 or 1).
inline auto ConstantEffectiveScalar(double value, HloInstruction** out = nullptr) {
  return MakePattern([value](HloInstruction* i) { return IsConstantWithValue(*i, value); })
      .Bind(out);
}
// A constant or broadcast of a constant whose elements are all equal (any
// value).
inline auto UniformConstant(HloInstruction** out = nullptr) {
  return MakePattern([](HloInstruction* i) { return IsUniformConstant(*i); }).Bind(out);
}

#define UIR_UNARY_PATTERN(Name, opcode)                       \
  template <typename X>                                       \
  auto Name(X x, HloInstruction** out = nullptr) {            \
    return Opcode(HloOpcode::opcode, std::move(x)).Bind(out); \
  }
#define UIR_BINARY_PATTERN(Name, opcode)                                    \
  template <typename A, typename B>                                         \
  auto Name(A a, B b, HloInstruction** out = nullptr) {                     \
    return Opcode(HloOpcode::opcode, std::move(a), std::move(b)).Bind(out); \
  }
UIR_UNARY_PATTERN(Negate, kNegate)
UIR_UNARY_PATTERN(Not, kNot)
UIR_UNARY_PATTERN(Broadcast, kBroadcast)
UIR_UNARY_PATTERN(Reshape, kReshape)
UIR_UNARY_PATTERN(Transpose, kTranspose)
UIR_UNARY_PATTERN(Convert, kConvert)
UIR_UNARY_PATTERN(Copy, kCopy)
UIR_UNARY_PATTERN(Bitcast, kBitcast)
UIR_UNARY_PATTERN(Slice, kSlice)
UIR_UNARY_PATTERN(Exp, kExp)
UIR_UNARY_PATTERN(Log, kLog)
UIR_BINARY_PATTERN(Add, kAdd)
UIR_BINARY_PATTERN(Subtract, kSubtract)
UIR_BINARY_PATTERN(Multiply, kMultiply)
UIR_BINARY_PATTERN(Divide, kDivide)
UIR_BINARY_PATTERN(Maximum, kMaximum)
UIR_BINARY_PATTERN(Minimum, kMinimum)
UIR_BINARY_PATTERN(And, kAnd)
UIR_BINARY_PATTERN(Or, kOr)
UIR_BINARY_PATTERN(Power, kPower)
#undef UIR_UNARY_PATTERN
#undef UIR_BINARY_PATTERN

}  // namespace m
}  // namespace uir::hlo

#endif  // UIR_HLO_PATTERN_MATCHER_H_
