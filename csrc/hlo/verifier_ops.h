// Opcode rules of the verifier that shape inference does not cover, and the
// documented limits on nesting (verifier_ops.cc).
#ifndef UIR_HLO_VERIFIER_OPS_H_
#define UIR_HLO_VERIFIER_OPS_H_

#include <cstdint>

#include "hlo/module.h"

namespace uir::hlo {

// Tuple shapes nest at most this deep (the parser and the verifier enforce
// it), so every walk over a shape or a tuple value is shallow.
inline constexpr int64_t kMaxShapeDepth = 128;
// Calls (fusion, call, while, map, reduce, ...) nest at most this deep: the
// evaluator and later stages walk called computations recursively.
inline constexpr int64_t kMaxCallDepth = 256;

// Throws VerifyError naming `inst` when its shape nests too deep or holds
// more bytes than int64 counts.
void CheckShapeLimits(const HloInstruction& inst);
// Throws VerifyError when `inst` lacks an attribute its opcode needs.
void CheckRequiredAttributes(const HloInstruction& inst);
// The rules of ops whose result shape is written out (rng, bitcast,
// collectives, scan, ...). Runs after CheckRequiredAttributes.
void CheckOpcodeRules(const HloInstruction& inst);
// Throws VerifyError when calls nest deeper than kMaxCallDepth.
void CheckCallDepth(const HloModule& module);

}  // namespace uir::hlo

#endif  // UIR_HLO_VERIFIER_OPS_H_
