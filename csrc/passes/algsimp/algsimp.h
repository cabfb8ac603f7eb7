// algsimp: the algebraic simplifier.
//
// Rewrites each instruction, in post order, by the first rule of its opcode
// family that applies; a rule returns an instruction computing the same
// value (an existing one, or one it built in the computation), which then
// replaces the original; what becomes unused is removed. Families, one file
// each: arithmetic identities (arith.cc), shape no-ops and their
// compositions (shape_ops.cc), dots and reductions (dot_reduce.cc).
// Rules keep exact results except where the header of a rule says it
// reassociates (reduce of a broadcast under add becomes a multiply). Rules
// fire only where the replacement has the same shape, layout included, so
// the pass is safe before and after layout assignment. Run it to a fixed
// point with dce and cse.
#ifndef UIR_PASSES_ALGSIMP_ALGSIMP_H_
#define UIR_PASSES_ALGSIMP_ALGSIMP_H_

#include "hlo/builder.h"
#include "passes/pass.h"

namespace uir::passes {

class AlgebraicSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "algsimp"; }
  bool Run(hlo::HloModule& module) override;
};

namespace algsimp {

// A rule: a replacement for `inst` (built with `b` if new), or nullptr.
using Rule = hlo::HloInstruction* (*)(hlo::HloInstruction* inst, hlo::ComputationBuilder& b);

// The rules of each family, tried in order.
const std::vector<Rule>& ArithmeticRules();
const std::vector<Rule>& ShapeRules();
const std::vector<Rule>& DotReduceRules();

// Helpers the rule files share.
// A broadcast of the scalar `value` (of inst's element type) to inst's shape.
hlo::HloInstruction* SplatLike(const hlo::HloInstruction* inst, double value,
                               hlo::ComputationBuilder& b);
// The binary opcode a reduction computation applies to its two parameters
// (add, multiply, maximum, minimum, and, or), or nullopt.
std::optional<hlo::HloOpcode> ReducerOpcode(const hlo::HloComputation& reducer);

}  // namespace algsimp
}  // namespace uir::passes

#endif  // UIR_PASSES_ALGSIMP_ALGSIMP_H_
