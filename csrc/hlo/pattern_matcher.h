// A small pattern matcher for rewrite rules: a rule reads as one line,
//   if (Match(inst, m::Add(m::Op(&x), m::ConstantScalar(0)))) return x;
// Patterns are values built from functions in namespace m; Bind pointers are
// set as sub-patterns match (a failed match may leave some set).
#ifndef UIR_HLO_PATTERN_MATCHER_H_
#define UIR_HLO_PATTERN_MATCHER_H_

#include <functional>
#include <utility>
#include <vector>

#include "hlo/instruction.h"

namespace uir::hlo {

class Pattern {
 public:
  using Predicate = std::function<bool(HloInstruction*)>;
  explicit Pattern(Predicate predicate) : predicate_(std::move(predicate)) {}
  bool Matches(HloInstruction* inst) const { return inst != nullptr && predicate_(inst); }

  // Refinements, each returning a new pattern.
  Pattern Bind(HloInstruction** out) const;
  Pattern WithOneUser() const;
  Pattern WithElementType(PrimitiveType type) const;
  Pattern WithShapeCompatibleTo(const Shape* shape) const;  // same dims and type
  Pattern Where(Predicate extra) const;

 private:
  Predicate predicate_;
};

inline bool Match(HloInstruction* inst, const Pattern& pattern) { return pattern.Matches(inst); }

namespace m {

// Any instruction.
Pattern Op(HloInstruction** out = nullptr);
// An instruction of `opcode` whose operands match `operands` in order (any
// operand count when `operands` is empty and `any_arity`).
Pattern Opcode(HloOpcode opcode, std::vector<Pattern> operands, HloInstruction** out = nullptr);
// A binary op whose operands match (a, b) in either order.
Pattern AnyOrder(HloOpcode opcode, Pattern a, Pattern b, HloInstruction** out = nullptr);

// A constant (any shape).
Pattern Constant(HloInstruction** out = nullptr);
// An array whose every element equals `value`: a constant, or a broadcast of
// such a constant. Integer, float and pred types (pred: 0 or 1).
Pattern ConstantEffectiveScalar(double value, HloInstruction** out = nullptr);
// A constant or broadcast of a constant whose elements are all equal (any
// value).
Pattern UniformConstant(HloInstruction** out = nullptr);

#define UIR_UNARY_PATTERN(Name, opcode)                            \
  inline Pattern Name(Pattern x, HloInstruction** out = nullptr) { \
    return Opcode(HloOpcode::opcode, {std::move(x)}, out);         \
  }
#define UIR_BINARY_PATTERN(Name, opcode)                                      \
  inline Pattern Name(Pattern a, Pattern b, HloInstruction** out = nullptr) { \
    return Opcode(HloOpcode::opcode, {std::move(a), std::move(b)}, out);      \
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
#undef UIR_UNARY_PATTERN
#undef UIR_BINARY_PATTERN

}  // namespace m

// True if every element of the array constant `inst` equals `value`.
bool IsConstantWithValue(const HloInstruction& inst, double value);

}  // namespace uir::hlo

#endif  // UIR_HLO_PATTERN_MATCHER_H_
