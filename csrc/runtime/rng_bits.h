// The library rng-bit-generator: counter-based random bits (Philox-4x32-10
// or Threefry-2x32-20) laid out as XLA's RngBitGeneratorExpander lays them
// out, described by numbers only, over the worker threads.
#ifndef UIR_RUNTIME_RNG_BITS_H_
#define UIR_RUNTIME_RNG_BITS_H_

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_RNG_BITS_H_
