#include "runtime/rng_bits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "runtime/narrow_float.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

struct Words4 {
  uint32_t w[4];
};
struct Words2 {
  uint32_t w[2];
};

// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1,
// 2, 3"): ten rounds of two 32x32->64 multiplies, the key bumped by the
// Weyl constants each round.
Words4 Philox(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t a = uint64_t{0xD2511F53} * c0;
    const uint64_t b = uint64_t{0xCD9E8D57} * c2;
    const uint32_t n0 = static_cast<uint32_t>(b >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(a >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(b);
    c3 = static_cast<uint32_t>(a);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{c0, c1, c2, c3}};
}

uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32-20 (the same paper): twenty add-rotate-xor rounds, a key
// injection after every four.
Words2 Threefry(uint32_t k0, uint32_t k1, uint32_t c0, uint32_t c1) {
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  static constexpr int kRotate[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  uint32_t x0 = c0 + ks[0];
  uint32_t x1 = c1 + ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r : kRotate[group & 1]) {
      x0 += x1;
      x1 = RotateLeft(x1, r) ^ x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {{x0, x1}};
}

void Store(uint8_t* out, int64_t i, int bytes, uint64_t v) {
  std::memcpy(out + i * bytes, &v, static_cast<size_t>(bytes));  // the low bytes, little-endian
}

constexpr int64_t kGrain = 4096;

bool IsRngFloat(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
         t == PrimitiveType::kF64;
}

bool IsRngInteger(PrimitiveType t) {
  return (IsSigned(t) || IsUnsigned(t)) && BitWidth(t) >= 8 && BitWidth(t) == 8 * StorageBytes(t);
}

// A scalar float of `type` at `at`, exactly, as a double.
double FloatAt(PrimitiveType type, const void* at) {
  if (type == PrimitiveType::kF64) return *static_cast<const double*>(at);
  if (type == PrimitiveType::kF32) return *static_cast<const float*>(at);
  float wide = 0;
  WidenToF32(type, at, 1, &wide);
  return wide;
}

// A scalar integer of `type` at `at`, sign- or zero-extended to 64 bits.
uint64_t IntegerAt(PrimitiveType type, const void* at) {
  const int bytes = static_cast<int>(StorageBytes(type));
  uint64_t v = 0;
  std::memcpy(&v, at, static_cast<size_t>(bytes));
  if (IsSigned(type) && bytes < 8 && (v >> (8 * bytes - 1)) != 0) v |= ~uint64_t{0} << (8 * bytes);
  return v;
}

// The value of `type` just below the one whose bits are `bits` (floats of
// any width order as sign and magnitude).
uint64_t BitsBelow(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t magnitude = bits & (sign - 1);
  if (magnitude == 0) return sign | 1;  // below zero: the smallest negative
  return (bits & sign) != 0 ? bits + 1 : bits - 1;
}

double Uniform53(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::string RngPlan::Invalid() const {
  if (elements < 0) return "a negative element count";
  if (distribution == RngDistribution::kNormal && !IsRngFloat(type)) {
    return "normal draws of " + std::string(PrimitiveTypeName(type));
  }
  if (!IsRngFloat(type) && !IsRngInteger(type)) {
    return "draws of " + std::string(PrimitiveTypeName(type));
  }
  return "";
}

std::string RngPlan::ToString() const {
  return std::string(distribution == RngDistribution::kNormal ? "normal " : "uniform ") +
         std::string(PrimitiveTypeName(type)) + " x " + std::to_string(elements);
}

void RunRng(const RngPlan& plan, const void* a_at, const void* b_at, void* out_v, uint64_t draw) {
  auto* out = static_cast<uint8_t*>(out_v);
  const PrimitiveType t = plan.type;
  const int bytes = static_cast<int>(StorageBytes(t));
  const uint32_t k0 = static_cast<uint32_t>(plan.key), k1 = static_cast<uint32_t>(plan.key >> 32);
  const uint32_t d0 = static_cast<uint32_t>(draw), d1 = static_cast<uint32_t>(draw >> 32);
  auto block = [&](int64_t i) {
    const auto c = static_cast<uint64_t>(i);
    const Words4 w =
        Philox(k0, k1, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), d0, d1);
    return std::pair<uint64_t, uint64_t>{uint64_t{w.w[0]} | (uint64_t{w.w[1]} << 32),
                                         uint64_t{w.w[2]} | (uint64_t{w.w[3]} << 32)};
  };
  if (IsRngInteger(t)) {
    const uint64_t a = IntegerAt(t, a_at), b = IntegerAt(t, b_at);
    const bool empty = IsSigned(t) ? static_cast<int64_t>(b) <= static_cast<int64_t>(a) : b <= a;
    const uint64_t range = b - a;  // modulo 2^64: the width, as unsigned
    ParallelFor(plan.elements, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Store(out, i, bytes, empty ? a : a + block(i).first % range);
      }
    });
    return;
  }
  const double a = FloatAt(t, a_at), b = FloatAt(t, b_at);
  const bool normal = plan.distribution == RngDistribution::kNormal;
  // The largest value below b (not below a), for a uniform draw that rounds up to b.
  uint64_t b_bits = 0;
  std::memcpy(&b_bits, b_at, static_cast<size_t>(bytes));
  uint64_t below = BitsBelow(b_bits, 8 * bytes);
  if (!(FloatAt(t, &below) >= a)) std::memcpy(&below, a_at, static_cast<size_t>(bytes));
  ParallelFor(plan.elements, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const auto [r0, r1] = block(i);
      double v;
      if (normal) {
        const double u1 = 1.0 - Uniform53(r0), u2 = Uniform53(r1);
        v = a + b * std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
      } else {
        v = a + (b - a) * Uniform53(r0);
      }
      uint64_t stored = 0;
      if (t == PrimitiveType::kF64) {
        std::memcpy(&stored, &v, 8);
      } else if (t == PrimitiveType::kF32) {
        const auto f = static_cast<float>(v);
        std::memcpy(&stored, &f, 4);
      } else {
        const auto f = static_cast<float>(v);
        NarrowFromF32(t, &f, 1, &stored);
      }
      if (!normal && b > a && !(FloatAt(t, &stored) < b)) stored = below;
      Store(out, i, bytes, stored);
    }
  });
}

int64_t RngBitsPlan::Elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string RngBitsPlan::Invalid() const {
  if (state_words < 2) return "a state of fewer than two words";
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return "elements of that width";
  for (int64_t d : dims) {
    if (d < 0) return "a negative dimension";
  }
  return "";
}

std::string RngBitsPlan::ToString() const {
  std::string s = algorithm == BitAlgorithm::kPhilox ? "philox u" : "threefry u";
  s += std::to_string(8 * bytes) + " [";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? "x" : "") + std::to_string(dims[d]);
  return s + "] state " + std::to_string(state_words);
}

void RunRngBits(const RngBitsPlan& plan, const uint64_t* state_in, uint64_t* state_out,
                void* bits_v) {
  std::vector<uint64_t> state(state_in, state_in + plan.state_words);
  auto* bits = static_cast<uint8_t*>(bits_v);
  const uint32_t k0 = static_cast<uint32_t>(state[0]), k1 = static_cast<uint32_t>(state[0] >> 32);
  const int64_t n = plan.Elements();
  const int b = plan.bytes;
  if (plan.algorithm == BitAlgorithm::kPhilox) {
    const uint64_t low = state[1];
    const uint64_t high = plan.state_words == 2 ? state[0] : state[2];
    const int per_block = b == 8 ? 2 : 4;
    const int64_t blocks = (n + per_block - 1) / per_block;
    ParallelFor(blocks, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const uint64_t lo = low + static_cast<uint64_t>(k);
        const uint64_t hi = high + (lo < low ? 1 : 0);
        const Words4 w = Philox(k0, k1, static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                                static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32));
        for (int j = 0; j < per_block; ++j) {
          const int64_t i = k * per_block + j;
          if (i >= n) break;
          const uint64_t v =
              b == 8 ? (uint64_t{w.w[2 * j]} | (uint64_t{w.w[2 * j + 1]} << 32)) : uint64_t{w.w[j]};
          Store(bits, i, b, v);
        }
      }
    });
    const uint64_t next = low + static_cast<uint64_t>(blocks);
    state[1] = next;
    if (plan.state_words > 2) state[2] = high + (next < low ? 1 : 0);
  } else if (b == 8) {
    const uint64_t counter = state[1];
    ParallelFor(n, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const uint64_t c = counter + static_cast<uint64_t>(i);
        const Words2 w = Threefry(k0, k1, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32));
        Store(bits, i, b, uint64_t{w.w[0]} | (uint64_t{w.w[1]} << 32));
      }
    });
    state[1] = counter + static_cast<uint64_t>(n);
  } else {
    // The halves: the array as [outer, size along the split, inner]; block
    // (o, k, i) of the half array fills elements (o, 2k, i) and (o, 2k+1, i).
    const uint64_t counter = state[1];
    int64_t outer = 1, along = 1, inner = 1;
    if (!plan.dims.empty()) {
      size_t split = plan.dims.size();
      for (size_t d = 0; d < plan.dims.size() && split == plan.dims.size(); ++d) {
        if (plan.dims[d] % 2 == 0) split = d;
      }
      if (split == plan.dims.size()) {
        split = 0;
        for (size_t d = 1; d < plan.dims.size(); ++d) {
          if (plan.dims[d] > plan.dims[split]) split = d;
        }
      }
      for (size_t d = 0; d < split; ++d) outer *= plan.dims[d];
      along = plan.dims[split];
      for (size_t d = split + 1; d < plan.dims.size(); ++d) inner *= plan.dims[d];
    }
    const int64_t half_along = (along + 1) / 2;
    const int64_t half = outer * half_along * inner;
    if (n > 0) {
      ParallelFor(half, kGrain, [&](int64_t begin, int64_t end) {
        for (int64_t h = begin; h < end; ++h) {
          const uint64_t c = counter + static_cast<uint64_t>(h);
          const Words2 w =
              Threefry(k0, k1, static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32));
          const int64_t i = h % inner, k = (h / inner) % half_along, o = h / inner / half_along;
          for (int word = 0; word < 2; ++word) {
            const int64_t at = 2 * k + word;
            if (at < along) Store(bits, (o * along + at) * inner + i, b, w.w[word]);
          }
        }
      });
    }
    state[1] = counter + static_cast<uint64_t>(plan.dims.empty() ? 1 : half);
  }
  std::copy(state.begin(), state.end(), state_out);
}

}  // namespace uir::runtime
