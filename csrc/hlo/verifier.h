// The HLO verifier: structural and semantic invariants of a module.
#ifndef UIR_HLO_VERIFIER_H_
#define UIR_HLO_VERIFIER_H_

#include "hlo/module.h"

namespace uir::hlo {

// Checks `module` and throws VerifyError naming the first instruction (or
// computation) that breaks an invariant:
// - names unique per computation; operands and control predecessors defined
//   in the same computation, before their users; no cycles;
// - operand counts; attributes that the opcode needs, in range;
// - every shape equal (layouts aside) to the inferred one, where XLA infers it;
//   layouts consistent with rank;
// - parameters numbered densely from 0; the entry matches
//   entry_computation_layout;
// - called computations belong to the module and have the signature their
//   caller needs (reduce, map, sort, scatter, while, conditional, call, fusion, ...);
// - async chains: async-start wraps a computation whose root is not an op with
//   its own -start/-done; its shape is ((operands), result, state...); each
//   start and update has exactly one user, an update or a done; update has the
//   start's shape and done the wrapped op's result.
void Verify(const HloModule& module);

}  // namespace uir::hlo

#endif  // UIR_HLO_VERIFIER_H_
