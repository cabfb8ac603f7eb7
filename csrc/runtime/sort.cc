// The library sort: each line's keys mapped to unsigned integers whose
// order is the comparator's, sorted stably with their positions, then
// every operand gathered in that order.
#include "runtime/sort.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/narrow_float.h"
#include "support/thread_pool.h"

namespace uir::runtime {

namespace {

// A float's bits (of `bits` width) as an unsigned key in total order.
uint64_t FloatKey(uint64_t b, int bits, bool canonical) {
  const uint64_t sign = uint64_t{1} << (bits - 1);
  const uint64_t all = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  if (canonical) {
    const uint64_t magnitude = b & (sign - 1);
    if (magnitude == 0) b = 0;  // -0 as +0
  }
  return (b & sign) ? (~b & all) : (b | sign);
}

// Mantissa bits of the float key types.
int MantissaBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
      return 10;
    case PrimitiveType::kBF16:
      return 7;
    case PrimitiveType::kF32:
      return 23;
    default:
      return 52;
  }
}

template <typename T>
uint64_t Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<uint64_t>(v);
}

// The quiet NaN every NaN key of a canonical float order becomes: one value
// above infinity.
uint64_t CanonicalNan(PrimitiveType t) {
  if (!IsFloat(t)) return 0;
  const int bits = BitWidth(t);
  const int mantissa = MantissaBits(t);
  const uint64_t sign = uint64_t{1} << (bits - 1);
  return ((sign - 1) & ~((uint64_t{1} << mantissa) - 1)) | (uint64_t{1} << (mantissa - 1));
}

// The key of the element at `p` as an unsigned integer in ascending order.
uint64_t KeyOf(const SortKey& plan, const uint8_t* p, uint64_t canonical_nan) {
  using P = PrimitiveType;
  switch (plan.type) {
    case P::kU2:
    case P::kU4:
      return SubByteValue(plan.type, *p);
    case P::kPred:
    case P::kU8:
      return *p;
    case P::kU16:
      return Load<uint16_t>(p);
    case P::kU32:
      return Load<uint32_t>(p);
    case P::kU64:
      return Load<uint64_t>(p);
    case P::kS2:
    case P::kS4:
      return static_cast<uint8_t>(SubByteValue(plan.type, *p) ^ 0x80u);
    case P::kS8:
      return static_cast<uint8_t>(*p ^ 0x80u);
    case P::kS16:
      return Load<uint16_t>(p) ^ 0x8000u;
    case P::kS32:
      return Load<uint32_t>(p) ^ 0x80000000u;
    case P::kS64:
      return Load<uint64_t>(p) ^ (uint64_t{1} << 63);
    default: {
      const int bits = BitWidth(plan.type);
      uint64_t b = bits == 64   ? Load<uint64_t>(p)
                   : bits == 32 ? Load<uint32_t>(p)
                                : Load<uint16_t>(p);
      if (plan.canonical) {
        const uint64_t sign = uint64_t{1} << (bits - 1);
        const uint64_t magnitude = b & (sign - 1);
        const int mantissa = MantissaBits(plan.type);
        const uint64_t exponent_all = (sign - 1) & ~((uint64_t{1} << mantissa) - 1);
        if ((magnitude & exponent_all) == exponent_all &&
            (magnitude & ((uint64_t{1} << mantissa) - 1))) {
          b = canonical_nan;  // every NaN one value above infinity
        }
      }
      return FloatKey(b, bits, plan.canonical);
    }
  }
}

}  // namespace

bool SortKeySupported(PrimitiveType type) {
  using P = PrimitiveType;
  switch (type) {
    case P::kPred:
    case P::kS2:
    case P::kS4:
    case P::kU2:
    case P::kU4:
    case P::kS8:
    case P::kS16:
    case P::kS32:
    case P::kS64:
    case P::kU8:
    case P::kU16:
    case P::kU32:
    case P::kU64:
    case P::kF16:
    case P::kBF16:
    case P::kF32:
    case P::kF64:
      return true;
    default:
      return false;
  }
}

int64_t SortPlan::Elements(const Operand& o, bool out) const {
  int64_t last = 0;
  for (int d = 0; d < rank; ++d) {
    const auto k = static_cast<size_t>(d);
    if (size[k] == 0) return 0;
    last += (size[k] - 1) * (out ? o.out_stride[k] : o.in_stride[k]);
  }
  return last + 1;
}

std::string SortPlan::Invalid() const {
  if (rank < 1 || rank > kMaxRank || dim < 0 || dim >= rank) return "rank or dimension";
  if (operands.empty()) return "no operands";
  if (keys.empty()) return "no keys";
  for (const SortKey& k : keys) {
    if (!SortKeySupported(k.type)) return "keys of " + std::string(PrimitiveTypeName(k.type));
    if (k.operand < 0 || k.operand >= static_cast<int>(operands.size())) return "key operand";
    const int64_t bytes = StorageBytes(k.type);
    const int64_t e = operands[static_cast<size_t>(k.operand)].element_bytes;
    if (k.part < -1 || k.part > 1 || (k.part >= 0 ? 2 * bytes != e : bytes != e)) {
      return "a key's type does not fit its operand";
    }
  }
  if (keep < 0) return "kept positions";
  for (int d = 0; d < rank; ++d) {
    if (size[static_cast<size_t>(d)] < 0) return "negative size";
  }
  for (const Operand& o : operands) {
    if (o.element_bytes < 1 || o.element_bytes > 16) return "element size";
  }
  return "";
}

std::string SortPlan::ToString() const {
  std::string s;
  for (size_t i = 0; i < keys.size(); ++i) {
    const SortKey& k = keys[i];
    s += (i ? ", then " : "") + std::string(PrimitiveTypeName(k.type)) +
         (k.descending ? " descending" : " ascending") + (k.canonical ? " (canonical)" : "");
    if (k.part >= 0) {
      s += std::string(k.part == 0 ? " real" : " imag") + " of " + std::to_string(k.operand);
    } else if (keys.size() > 1) {
      s += " of " + std::to_string(k.operand);
    }
  }
  const bool one_plain = keys.size() == 1 && keys[0].part < 0;
  s += " [";
  for (int d = 0; d < rank; ++d) {
    const std::string n = std::to_string(size[static_cast<size_t>(d)]);
    s += (d ? "x" : "") + (d == dim ? "(" + n + ")" : n);
  }
  return s + "] " + std::to_string(operands.size()) + " operand" +
         (operands.size() == 1 ? "" : "s") +
         (one_plain && keys[0].operand != 0 ? ", keys in " + std::to_string(keys[0].operand) : "") +
         (keep > 0 ? ", first " + std::to_string(keep) : "");
}

void RunSort(const SortPlan& p, const std::vector<const void*>& in, const std::vector<void*>& out) {
  const auto kd = static_cast<size_t>(p.dim);
  const int64_t n = p.size[kd];
  int64_t lines = 1;
  std::vector<int> outer;
  for (int d = 0; d < p.rank; ++d) {
    if (d == p.dim) continue;
    outer.push_back(d);
    lines *= p.size[static_cast<size_t>(d)];
  }
  if (n == 0 || lines == 0) return;
  const size_t nk = p.keys.size();
  std::vector<uint64_t> canonical_nan(nk);
  for (size_t k = 0; k < nk; ++k) canonical_nan[k] = CanonicalNan(p.keys[k].type);
  const int64_t keep = p.keep > 0 && p.keep < n ? p.keep : n;
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n));
  ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
    // The first key with each position; the later keys (several keys)
    // position by position.
    std::vector<std::pair<uint64_t, int64_t>> order(static_cast<size_t>(n));
    std::vector<uint64_t> later(static_cast<size_t>(n) * (nk - 1));
    std::vector<uint8_t> line;
    for (int64_t l = begin; l < end; ++l) {
      // The line's first element in every operand, input and output.
      std::vector<int64_t> in_at(p.operands.size(), 0), out_at(p.operands.size(), 0);
      int64_t r = l;
      for (size_t j = outer.size(); j-- > 0;) {
        const auto d = static_cast<size_t>(outer[j]);
        const int64_t c = r % p.size[d];
        r /= p.size[d];
        for (size_t o = 0; o < p.operands.size(); ++o) {
          in_at[o] += c * p.operands[o].in_stride[d];
          out_at[o] += c * p.operands[o].out_stride[d];
        }
      }
      for (size_t k = 0; k < nk; ++k) {
        const SortKey& key = p.keys[k];
        const auto ko = static_cast<size_t>(key.operand);
        const SortPlan::Operand& op = p.operands[ko];
        const auto* data =
            static_cast<const uint8_t*>(in[ko]) + std::max(key.part, 0) * StorageBytes(key.type);
        for (int64_t i = 0; i < n; ++i) {
          const uint8_t* at = data + (in_at[ko] + i * op.in_stride[kd]) * op.element_bytes;
          uint64_t v = KeyOf(key, at, canonical_nan[k]);
          if (key.descending) v = ~v;
          if (k == 0) {
            order[static_cast<size_t>(i)] = {v, i};
          } else {
            later[static_cast<size_t>(i) * (nk - 1) + k - 1] = v;
          }
        }
      }
      if (nk == 1) {
        if (keep < n) {
          // The first `keep` by (key, position): what a stable sort puts there.
          std::partial_sort(order.begin(), order.begin() + keep, order.end());
        } else {
          std::stable_sort(order.begin(), order.end(),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
        }
      } else {
        // Lexicographic over the keys, then by position: a total order, so
        // any sort gives the stable result.
        auto before = [&](const std::pair<uint64_t, int64_t>& a,
                          const std::pair<uint64_t, int64_t>& b) {
          if (a.first != b.first) return a.first < b.first;
          const uint64_t* x = later.data() + static_cast<size_t>(a.second) * (nk - 1);
          const uint64_t* y = later.data() + static_cast<size_t>(b.second) * (nk - 1);
          for (size_t k = 0; k + 1 < nk; ++k) {
            if (x[k] != y[k]) return x[k] < y[k];
          }
          return a.second < b.second;
        };
        if (keep < n) {
          std::partial_sort(order.begin(), order.begin() + keep, order.end(), before);
        } else {
          std::sort(order.begin(), order.end(), before);
        }
      }
      // Each operand's line copied out first: the result may be the
      // operand's own memory (a sort in place).
      for (size_t o = 0; o < p.operands.size(); ++o) {
        const SortPlan::Operand& op = p.operands[o];
        const auto e = static_cast<size_t>(op.element_bytes);
        const auto* src = static_cast<const uint8_t*>(in[o]);
        auto* dst = static_cast<uint8_t*>(out[o]);
        line.resize(static_cast<size_t>(n) * e);
        const int64_t is = op.in_stride[kd], os = op.out_stride[kd];
        const uint8_t* from = src + in_at[o] * op.element_bytes;
        uint8_t* to = dst + out_at[o] * op.element_bytes;
        // Copies of a compile-time size (one move each) for the usual
        // element sizes.
        auto permute = [&]<size_t B>(std::integral_constant<size_t, B>) {
          for (int64_t i = 0; i < n; ++i) {
            std::memcpy(line.data() + static_cast<size_t>(i) * B, from + i * is * int64_t{B}, B);
          }
          for (int64_t j = 0; j < keep; ++j) {
            const auto i = static_cast<size_t>(order[static_cast<size_t>(j)].second);
            std::memcpy(to + j * os * int64_t{B}, line.data() + i * B, B);
          }
        };
        switch (e) {
          case 1:
            permute(std::integral_constant<size_t, 1>{});
            break;
          case 2:
            permute(std::integral_constant<size_t, 2>{});
            break;
          case 4:
            permute(std::integral_constant<size_t, 4>{});
            break;
          case 8:
            permute(std::integral_constant<size_t, 8>{});
            break;
          default:
            for (int64_t i = 0; i < n; ++i) {
              std::memcpy(line.data() + static_cast<size_t>(i) * e,
                          from + i * is * op.element_bytes, e);
            }
            for (int64_t j = 0; j < keep; ++j) {
              const auto i = static_cast<size_t>(order[static_cast<size_t>(j)].second);
              std::memcpy(to + j * os * op.element_bytes, line.data() + i * e, e);
            }
        }
      }
    }
  });
}

}  // namespace uir::runtime
