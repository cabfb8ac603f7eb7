// The library rng-bit-generator: counter-based random bits (Philox-4x32-10
// or Threefry-2x32-20) laid out as XLA's RngBitGeneratorExpander lays them
// out, described by numbers only, over the worker threads; and the rng op's
// draws (uniform or normal), from the same Philox blocks.
#ifndef UIR_RUNTIME_RNG_BITS_H_
#define UIR_RUNTIME_RNG_BITS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "support/primitive_type.h"

namespace uir::runtime {

enum class BitAlgorithm : uint8_t { kPhilox, kThreefry };

// Fills a row-major array of `dims` with `bytes`-wide elements (1, 2, 4 or
// 8) from a u64 state of `state_words` (at least 2) words, and writes the
// advanced state. The key is state[0]. Philox's 128-bit counter is
// (state[1], state[2]), or (state[1], state[0]) for a two-word state;
// 32-bit (and narrower, their low bits) draws fill elements four per
// block, 64-bit ones two per block. Threefry's counter is state[1]; a
// 64-bit element is one block, narrower ones split the array in two along
// its first even dimension (else its largest) and take the two words of
// block i to element i of each half, interleaved along that dimension.
struct RngBitsPlan {
  BitAlgorithm algorithm = BitAlgorithm::kPhilox;
  int state_words = 2;
  int bytes = 4;
  std::vector<int64_t> dims;

  int64_t Elements() const;
  // Why the plan cannot run, or "".
  std::string Invalid() const;
  // "philox u32 [4x8] state 2".
  std::string ToString() const;
};

// Runs `plan`: `state_in` and `state_out` hold state_words words (they may
// be the same memory); `bits` the array.
void RunRngBits(const RngBitsPlan& plan, const uint64_t* state_in, uint64_t* state_out, void* bits);

enum class RngDistribution : uint8_t { kUniform, kNormal };

// The rng op: `elements` values of `type`, element i of draw d (the
// thunk's d-th run) from the Philox-4x32-10 block at counter (i, d) under
// `key`. Uniform: floats in [a, b) (a + (b - a) u, u of 53 random bits,
// rounded in the type; a result that rounds up to b takes the largest
// value below it), integers a + r mod (b - a) from 64 random bits (a when
// b <= a). Normal: mean a and standard deviation b, by Box and Muller's
// transform of two uniforms, floats only. Float types: f16, bf16, f32 and
// f64; integer types of 8 to 64 bits.
struct RngPlan {
  RngDistribution distribution = RngDistribution::kUniform;
  PrimitiveType type = PrimitiveType::kF32;
  int64_t elements = 0;
  uint64_t key = 0;

  // Why the plan cannot run, or "".
  std::string Invalid() const;
  // "uniform f32 x 1000".
  std::string ToString() const;
};

// Runs `plan` for its `draw`-th time: `a` and `b` are scalars of the
// plan's type, `out` the array.
void RunRng(const RngPlan& plan, const void* a, const void* b, void* out, uint64_t draw);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_RNG_BITS_H_
