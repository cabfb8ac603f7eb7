// Random numbers. rng draws from a splitmix64 stream keyed by the seed, the
// instruction and its run count (XLA leaves those bits to the backend;
// these are uir's, and stable). rng-bit-generator gives XLA:CPU's bits:
// Philox-4x32-10 (rng_default, rng_philox) or Threefry-2x32-20
// (rng_three_fry), laid out as XLA's expander lays them out.
#include "eval/rng.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <numbers>

#include "eval/typed.h"
#include "support/error.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double Uniform01(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

Literal Rng(const HloInstruction& inst, const std::vector<const Literal*>& ops, RngState& state) {
  const auto dist = inst.attributes().GetEnum<hlo::RandomDistribution>(AttrKey::kDistribution);
  const uint64_t run = state.runs[&inst]++;
  const uint64_t stream =
      SplitMix64(state.seed ^ SplitMix64(std::hash<std::string>()(inst.name()) + run));
  const PrimitiveType t = inst.shape().element_type();
  Literal out = MakeLiteral(t, inst.shape().dimensions());
  auto bits = [&](int64_t i, uint64_t k) {
    return SplitMix64(stream + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + k);
  };
  if (dist == hlo::RandomDistribution::kNormal) {
    const double mu = ops[0]->GetDouble(0), sigma = ops[1]->GetDouble(0);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const double u1 = 1.0 - Uniform01(bits(i, 0)), u2 = Uniform01(bits(i, 1));
      out.SetDouble(
          i, mu + sigma * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2));
    }
    return out;
  }
  if (IsFloat(t)) {
    // [a, b): a draw that rounds up to b in the result type is redrawn.
    const double a = ops[0]->GetDouble(0), b = ops[1]->GetDouble(0);
    for (int64_t i = 0; i < out.element_count(); ++i) {
      out.SetDouble(i, a);
      for (uint64_t k = 0; k < 8; ++k) {
        out.SetDouble(i, a + (b - a) * Uniform01(bits(i, k)));
        if (out.GetDouble(i) < b || !(b > a)) break;
        out.SetDouble(i, a);
      }
    }
    return out;
  }
  const bool is_unsigned = IsUnsigned(t) || t == PrimitiveType::kPred;
  const uint64_t a =
      is_unsigned ? ops[0]->GetUint64(0) : static_cast<uint64_t>(ops[0]->GetInt64(0));
  const uint64_t b =
      is_unsigned ? ops[1]->GetUint64(0) : static_cast<uint64_t>(ops[1]->GetInt64(0));
  const uint64_t range = b - a;  // modulo 2^64, as an unsigned width
  const bool empty = is_unsigned ? b <= a : static_cast<int64_t>(b) <= static_cast<int64_t>(a);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const uint64_t v = empty ? a : a + bits(i, 0) % range;
    if (is_unsigned) {
      out.SetUint64(i, v);
    } else {
      out.SetInt64(i, static_cast<int64_t>(v));
    }
  }
  return out;
}

uint32_t Rotl(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Where XLA's Threefry draws each 32-bit value (xla/hlo/builder/lib/prng.cc,
// ThreeFryRngBit32): the shape is split in two along its first even
// dimension (else its largest), each half element i takes counter
// state + i and its two output words go to the two halves, interleaved
// along the split dimension. Returns the counter offset and the word (0 or
// 1) of each element, in row-major order, and the half's element count.
int64_t ThreefrySplit(const std::vector<int64_t>& dims, std::vector<int64_t>* offset,
                      std::vector<uint8_t>* word) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  offset->assign(static_cast<size_t>(count), 0);
  word->assign(static_cast<size_t>(count), 0);
  if (dims.empty()) {
    return 1;  // half shape [1]: the scalar is word 0 of counter 0
  }
  int split = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = static_cast<int>(i);
      break;
    }
  }
  if (split < 0) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (split < 0 || dims[i] > dims[static_cast<size_t>(split)]) split = static_cast<int>(i);
    }
  }
  std::vector<int64_t> half = dims;
  half[static_cast<size_t>(split)] = (dims[static_cast<size_t>(split)] + 1) / 2;
  int64_t half_count = 1;
  for (int64_t d : half) half_count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t linear = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      const int64_t at = static_cast<int>(d) == split ? index[d] / 2 : index[d];
      linear = linear * half[d] + at;
    }
    (*offset)[static_cast<size_t>(e)] = linear;
    (*word)[static_cast<size_t>(e)] = static_cast<uint8_t>(index[static_cast<size_t>(split)] % 2);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return half_count;
}

void StoreBits(std::vector<uint8_t>& out, int64_t i, int bytes, uint64_t v) {
  std::memcpy(out.data() + i * bytes, &v, static_cast<size_t>(bytes));  // little-endian low bytes
}

// rng-bit-generator as XLA's RngBitGeneratorExpander computes it: key
// state[0]; Threefry's counter state[1]; Philox's 128-bit counter
// (state[1], state[2]), or (state[1], state[0]) for a two-word state, of
// which only state[1] advances. Values narrower than 32 bits are the low
// bits of 32-bit draws, 64-bit ones whole draws.
Literal BitGenerator(const HloInstruction& inst, const Literal& state_in) {
  const std::string algorithm =
      inst.attributes().GetOr<std::string>(AttrKey::kAlgorithm).value_or("rng_default");
  const bool threefry = algorithm == "rng_three_fry";
  if (state_in.element_count() < 2 || BitWidth(state_in.shape().element_type()) != 64) {
    throw UnimplementedError("the evaluator's rng-bit-generator takes a u64[2+] state (%" +
                             inst.name() + ")");
  }
  const uint64_t key64 = state_in.GetUint64(0);
  const uint32_t key[2] = {static_cast<uint32_t>(key64), static_cast<uint32_t>(key64 >> 32)};
  Literal bits(inst.shape().tuple_shapes(1));
  const PrimitiveType type = bits.shape().element_type();
  const int width = BitWidth(type);
  const int bytes = StorageBytes(type);
  const int64_t n = bits.element_count();
  std::vector<uint8_t>& out = bits.mutable_bytes();
  Literal new_state = state_in;
  if (threefry) {
    const uint64_t counter = state_in.GetUint64(1);
    auto draw = [&](uint64_t c, uint32_t w[2]) {
      const uint32_t in[2] = {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)};
      Threefry2x32(key, in, w);
    };
    if (width == 64) {
      for (int64_t i = 0; i < n; ++i) {
        uint32_t w[2];
        draw(counter + static_cast<uint64_t>(i), w);
        StoreBits(out, i, bytes, uint64_t{w[0]} | (uint64_t{w[1]} << 32));
      }
      new_state.SetUint64(1, counter + static_cast<uint64_t>(n));
    } else {
      std::vector<int64_t> offset;
      std::vector<uint8_t> word;
      const int64_t half = ThreefrySplit(bits.shape().dimensions(), &offset, &word);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t w[2];
        draw(counter + static_cast<uint64_t>(offset[static_cast<size_t>(i)]), w);
        StoreBits(out, i, bytes, w[word[static_cast<size_t>(i)]]);
      }
      new_state.SetUint64(1, counter + static_cast<uint64_t>(half));
    }
  } else {
    const bool two_words = state_in.element_count() < 3;
    const uint64_t low = state_in.GetUint64(1);
    const uint64_t high = two_words ? state_in.GetUint64(0) : state_in.GetUint64(2);
    auto block = [&](uint64_t b, uint32_t w[4]) {
      const uint64_t lo = low + b;
      const uint64_t hi = high + (lo < low ? 1 : 0);
      const uint32_t c[4] = {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                             static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
      Philox4x32(key, c, w);
    };
    uint64_t blocks;
    if (width == 64) {
      blocks = static_cast<uint64_t>((2 * n + 3) / 4);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t w[4];
        block(static_cast<uint64_t>(i / 2), w);
        const int h = static_cast<int>(i % 2) * 2;
        StoreBits(out, i, bytes, uint64_t{w[h]} | (uint64_t{w[h + 1]} << 32));
      }
    } else {
      blocks = static_cast<uint64_t>((n + 3) / 4);
      for (int64_t i = 0; i < n; ++i) {
        uint32_t w[4];
        block(static_cast<uint64_t>(i / 4), w);
        StoreBits(out, i, bytes, w[i % 4]);
      }
    }
    const uint64_t new_low = low + blocks;
    new_state.SetUint64(1, new_low);
    if (!two_words) new_state.SetUint64(2, high + (new_low < low ? 1 : 0));
  }
  NormalizeSubByte(bits);
  return TupleOf({std::move(new_state), std::move(bits)});
}

}  // namespace

void Philox4x32(const uint32_t key_in[2], const uint32_t counter[4], uint32_t out[4]) {
  uint32_t key[2] = {key_in[0], key_in[1]};
  uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53} * c[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57} * c[2];
    const uint32_t next[4] = {
        static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
        static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
    std::memcpy(c, next, sizeof(c));
    key[0] += 0x9E3779B9;
    key[1] += 0xBB67AE85;
  }
  std::memcpy(out, c, sizeof(c));
}

void Threefry2x32(const uint32_t key[2], const uint32_t counter[2], uint32_t out[2]) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  uint32_t x0 = counter[0] + ks[0], x1 = counter[1] + ks[1];
  for (int block = 0; block < 5; ++block) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = Rotl(x1, kRotations[(block % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
  out[0] = x0;
  out[1] = x1;
}

Literal EvalRng(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                RngState& state) {
  switch (inst.opcode()) {
    case HloOpcode::kRng:
      return Rng(inst, ops, state);
    case HloOpcode::kRngBitGenerator:
      return BitGenerator(inst, *ops[0]);
    case HloOpcode::kRngGetAndUpdateState: {
      Literal out = MakeLiteral(inst.shape().element_type(), inst.shape().dimensions());
      if (out.element_count() > 0) out.SetUint64(0, state.seed);
      if (out.element_count() > 1) out.SetUint64(1, state.global);
      state.global +=
          static_cast<uint64_t>(inst.attributes().GetOr<int64_t>(AttrKey::kDelta).value_or(0));
      return out;
    }
    default:
      break;
  }
  throw InternalError("EvalRng called on " + std::string(hlo::OpcodeName(inst.opcode())));
}

}  // namespace uir::eval
