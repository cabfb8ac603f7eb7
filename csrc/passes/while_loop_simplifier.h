// while-loop-simplifier: dead loop state, and loops that run 0 or 1 times.
//
// - A loop-carried value (an element of the while's tuple state) that
//   nothing outside the loop reads, the condition does not read, and no
//   other live element or side-effecting instruction of the body depends
//   on, is removed from the state: the body, the condition, the initial
//   tuple and the readers of the result are rewritten to the smaller tuple.
// - A loop with a recognizable induction variable (the condition compares
//   one integer element with a constant, the initial value is a constant,
//   the body adds a constant step to it) is replaced by its initial value
//   when the condition fails at once, and by one inlined copy of the body
//   when it fails after one step.
// Loops whose body or condition is shared with another caller, that have
// control edges, a condition with side effects or a state read other than
// through get-tuple-element are left alone. Computations left uncalled are
// removed.
#ifndef UIR_PASSES_WHILE_LOOP_SIMPLIFIER_H_
#define UIR_PASSES_WHILE_LOOP_SIMPLIFIER_H_

#include "passes/pass.h"

namespace uir::passes {

class WhileLoopSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "while-loop-simplifier"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_WHILE_LOOP_SIMPLIFIER_H_
