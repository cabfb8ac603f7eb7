// Dot chains: two matrix products around a row-local epilogue,
//
//   second = dot(E(first = dot(a, b), scalars...), c)
//
// as in attention (Q·Kᵀ, a scaled softmax, ·V) and in a two-layer MLP
// (x·W1, its activation, ·W2). Row i of `second` needs only row i of
// `first`, so the chain runs block of rows by block of rows: the [M, N]
// intermediate lives in a small scratch block and never reaches memory.
//
// The form, with R = rank of `first`, D = its dimensions [batch..., M, N]:
//  - both dots are f32 or f64 (operands of the result's type), their batch
//    dimensions lead in order on both sides, each operand has one
//    contracting and one free dimension; `first` is D and `second`
//    contracts dimension N of its left operand, E's result.
//  - E is the instructions between them. Each has dimensions D, D without
//    N (a row's result) or none (a scalar), and is an elementwise op, a
//    reduce of a D value over N alone, a broadcast of a row result along N
//    (dimensions 0..R-2) or of a scalar, or a scalar constant. Nothing in
//    E depends on which row it is in (no iota, no other operands of D's
//    size), which is what makes blocks of rows independent.
//  - a, b, c and the scalars E reads are leaves: parameters in a fused
//    computation, any value outside it when the chain is still spread over
//    several instructions (dot-chain-fusion asks before fusing them).
#ifndef UIR_ANALYSIS_DOT_CHAIN_H_
#define UIR_ANALYSIS_DOT_CHAIN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hlo/computation.h"

namespace uir::analysis {

struct DotChain {
  const hlo::HloInstruction* first = nullptr;
  const hlo::HloInstruction* second = nullptr;
  const hlo::HloInstruction* a = nullptr;  // first's operands
  const hlo::HloInstruction* b = nullptr;
  const hlo::HloInstruction* c = nullptr;            // second's right operand
  std::vector<const hlo::HloInstruction*> scalars;   // scalar leaves E reads
  std::vector<const hlo::HloInstruction*> epilogue;  // E, operands before users
  // The instructions the chain is made of in the computation `second` is
  // in (fusions entered, plain instructions of E, `first` or its fusion),
  // users before operands; empty for a chain inside one fused computation.
  std::vector<const hlo::HloInstruction*> spread;
};

// The chain ending at the dot `second`, or nullopt with the reason in
// `why`. `enter` says which fusions (in `second`'s computation) the chain
// may run through: their parameters are then their operands outside. With
// no `enter`, `second` is a fused computation's root and its parameters
// are the leaves.
std::optional<DotChain> MatchDotChain(
    const hlo::HloInstruction& second, std::string* why = nullptr,
    const std::function<bool(const hlo::HloInstruction&)>& enter = nullptr);

// The rows of one block when a chain of `rows` rows of `row_bytes` (the
// intermediate's) runs block by block, re-reading `reread_bytes` (the
// first dot's right operand and the second's, per batch) for every block,
// where a kernel may keep `fast_bytes` live in cache (MachineModel's
// fast_memory_bytes, HardwareModel's sram_bytes: half a core's L2): about
// half of that per block, more when the re-reads do not fit and would
// otherwise cost more memory traffic than half of what not writing and
// reading the intermediate saves. 0 when blocking does not pay: the
// re-reads outweigh the intermediate even with two blocks, or a block
// would need more than 8 times `fast_bytes`.
int64_t DotChainBlockRows(int64_t rows, int64_t row_bytes, int64_t reread_bytes,
                          int64_t fast_bytes);
// The same for `chain` (its shapes give the numbers).
int64_t DotChainBlockRows(const DotChain& chain, int64_t fast_bytes);

// The dot as one GEMM per batch: f32/f64 operands of the result's type,
// batch dimensions leading in order on both sides, one contracting and at
// most one free dimension per operand.
bool IsGemmDot(const hlo::HloInstruction& dot);

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_DOT_CHAIN_H_
