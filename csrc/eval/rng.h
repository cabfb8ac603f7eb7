// Evaluation of rng, rng-bit-generator and rng-get-and-update-state:
// deterministic for a given seed.
#ifndef UIR_EVAL_RNG_H_
#define UIR_EVAL_RNG_H_

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "hlo/instruction.h"

namespace uir::eval {

// The evaluator's random state: a seed, and how often each rng
// instruction has run (so a loop draws new numbers each iteration).
struct RngState {
  uint64_t seed = 0;
  uint64_t global = 0;  // rng-get-and-update-state's counter
  std::unordered_map<const hlo::HloInstruction*, uint64_t> runs;
};

hlo::Literal EvalRng(const hlo::HloInstruction& inst,
                     const std::vector<const hlo::Literal*>& operands, RngState& state);

// The Philox-4x32-10 block for `counter` under `key`, and the
// Threefry-2x32-20 block: the counter-based generators rng-bit-generator
// uses (exposed for tests against published vectors).
void Philox4x32(const uint32_t key[2], const uint32_t counter[4], uint32_t out[4]);
void Threefry2x32(const uint32_t key[2], const uint32_t counter[2], uint32_t out[2]);

}  // namespace uir::eval

#endif  // UIR_EVAL_RNG_H_
