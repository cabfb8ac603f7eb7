// constant-folding: an instruction whose operands are all constants is
// evaluated (by the reference evaluator, so folding means exactly what
// running would) and replaced by a constant.
//
// Not folded: side-effecting instructions, broadcasts and iotas (a constant
// would be bigger than the op), results of more than kMaxFoldedElements
// elements, tuples, ops whose result depends on the device (replica-id,
// partition-id) and ops that run other computations as control flow
// (while, conditional, call, fusion, custom-call, async). Safe anywhere
// before fusion.
#ifndef UIR_PASSES_CONSTANT_FOLDING_H_
#define UIR_PASSES_CONSTANT_FOLDING_H_

#include "passes/pass.h"

namespace uir::passes {

class ConstantFolding : public HloPass {
 public:
  static constexpr int64_t kMaxFoldedElements = 1 << 16;
  std::string_view name() const override { return "constant-folding"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_CONSTANT_FOLDING_H_
