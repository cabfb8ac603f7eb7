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

// The keys of a line of n elements `step` bytes apart, as unsigned
// integers in ascending order (a descending key's inverted): one loop per
// common key type, KeyOf element by element for the rest.
void LineKeys(const SortKey& key, const uint8_t* data, int64_t step, int64_t n,
              uint64_t canonical_nan, uint64_t* out) {
  // Keys are below 2^bits (a byte for pred and sub-byte types): a
  // descending key is inverted within them.
  const int bits = std::max(8, BitWidth(key.type));
  const uint64_t flip = !key.descending ? 0 : bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  auto map = [&]<typename Bits>(Bits, auto f) {
    for (int64_t i = 0; i < n; ++i) {
      Bits b;
      std::memcpy(&b, data + i * step, sizeof(Bits));
      out[i] = static_cast<uint64_t>(f(b)) ^ flip;
    }
  };
  using P = PrimitiveType;
  if (key.type == P::kF32 && !key.canonical) {
    map(uint32_t{}, [](uint32_t b) { return (b & 0x80000000u) ? ~b : (b | 0x80000000u); });
  } else if (key.type == P::kF32) {
    const auto nan = static_cast<uint32_t>(canonical_nan);
    map(uint32_t{}, [nan](uint32_t b) {
      const uint32_t magnitude = b & 0x7fffffffu;
      if (magnitude == 0) b = 0;
      if (magnitude > 0x7f800000u) b = nan;
      return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    });
  } else if (key.type == P::kF64 && !key.canonical) {
    constexpr uint64_t kSign = uint64_t{1} << 63;
    map(uint64_t{}, [](uint64_t b) { return (b & kSign) ? ~b : (b | kSign); });
  } else if (key.type == P::kS32) {
    map(uint32_t{}, [](uint32_t b) { return b ^ 0x80000000u; });
  } else if (key.type == P::kU32) {
    map(uint32_t{}, [](uint32_t b) { return b; });
  } else if (key.type == P::kS64) {
    map(uint64_t{}, [](uint64_t b) { return b ^ (uint64_t{1} << 63); });
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = KeyOf(key, data + i * step, canonical_nan) ^ flip;
  }
}

using KeyAt = std::pair<uint64_t, int64_t>;

// The `keep` smallest of the n items make(0), ..., make(n - 1) (distinct),
// ascending, in buffer[0, keep). Few kept (up to kInsertKeep): the keep
// smallest so far stay sorted and an item below the largest is inserted;
// for random data, about keep * ln(n / keep) items are. More: items below
// a bound (the largest of keep earlier ones) are appended without a
// branch, and whenever the `capacity` items of the buffer fill it, it is
// cut back to its keep smallest and the bound lowered. Either way, most
// items cost a comparison.
constexpr int64_t kInsertKeep = 32;

template <typename T, typename Make>
void BufferedSelect(T* buffer, int64_t capacity, int64_t n, int64_t keep, Make make) {
  for (int64_t i = 0; i < keep; ++i) buffer[i] = make(i);
  if (keep <= kInsertKeep) {
    std::sort(buffer, buffer + keep);
    T bound = buffer[keep - 1];
    for (int64_t i = keep; i < n; ++i) {
      const T item = make(i);
      if (item < bound) [[unlikely]] {
        int64_t j = keep - 1;
        for (; j > 0 && item < buffer[j - 1]; --j) buffer[j] = buffer[j - 1];
        buffer[j] = item;
        bound = buffer[keep - 1];
      }
    }
    return;
  }
  T bound = *std::max_element(buffer, buffer + keep);
  int64_t count = keep;
  for (int64_t i = keep; i < n; ++i) {
    const T item = make(i);
    buffer[count] = item;
    count += item < bound ? 1 : 0;
    if (count == capacity) {
      std::nth_element(buffer, buffer + (keep - 1), buffer + count);
      bound = buffer[keep - 1];
      count = keep;
    }
  }
  std::partial_sort(buffer, buffer + keep, buffer + count);
}

// The `keep` smallest (key, position) pairs of keys[0, n), ascending, in
// `best`; `narrow` keys (below 2^32) are packed with their positions into
// one integer each. Few kept: BufferedSelect; many: a partial sort.
void SelectSmallest(const uint64_t* keys, int64_t n, int64_t keep, bool narrow,
                    std::vector<uint64_t>& packed, std::vector<KeyAt>& best) {
  const int64_t capacity = std::max<int64_t>(4 * keep, 64);
  if (keep == 0 || keep * 8 >= n || capacity >= n) {
    best.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) best[static_cast<size_t>(i)] = {keys[i], i};
    std::partial_sort(best.begin(), best.begin() + keep, best.end());
    best.resize(static_cast<size_t>(keep));
    return;
  }
  if (narrow && n <= (int64_t{1} << 32)) {
    packed.resize(static_cast<size_t>(capacity));
    BufferedSelect(packed.data(), capacity, n, keep,
                   [keys](int64_t i) { return keys[i] << 32 | static_cast<uint64_t>(i); });
    best.resize(static_cast<size_t>(keep));
    for (int64_t j = 0; j < keep; ++j) {
      const uint64_t v = packed[static_cast<size_t>(j)];
      best[static_cast<size_t>(j)] = {v >> 32, static_cast<int64_t>(v & 0xffffffffu)};
    }
    return;
  }
  best.resize(static_cast<size_t>(capacity));
  BufferedSelect(best.data(), capacity, n, keep, [keys](int64_t i) { return KeyAt{keys[i], i}; });
  best.resize(static_cast<size_t>(keep));
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

namespace {

// ", 0 and 2 unread" for the operands whose results are not written.
std::string UnreadText(const std::vector<SortPlan::Operand>& operands) {
  std::vector<std::string> unread;
  for (size_t o = 0; o < operands.size(); ++o) {
    if (operands[o].unread) unread.push_back(std::to_string(o));
  }
  std::string s;
  for (size_t i = 0; i < unread.size(); ++i)
    s += (i == 0 ? ", " : i + 1 == unread.size() ? " and " : ", ") + unread[i];
  return s.empty() ? s : s + " unread";
}

}  // namespace

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
         (keep > 0 ? ", first " + std::to_string(keep) : "") + UnreadText(operands);
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
  // Whether an operand's result may be its input's memory (a sort in
  // place): then each line is copied out before it is written.
  std::vector<bool> overlaps(p.operands.size());
  for (size_t o = 0; o < p.operands.size(); ++o) {
    const SortPlan::Operand& op = p.operands[o];
    const auto* a = static_cast<const uint8_t*>(in[o]);
    const auto* b = static_cast<const uint8_t*>(out[o]);
    overlaps[o] = a < b + p.Elements(op, true) * op.element_bytes &&
                  b < a + p.Elements(op, false) * op.element_bytes;
  }
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n));
  ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
    // The first key with each position; the later keys (several keys)
    // position by position.
    std::vector<KeyAt> order(static_cast<size_t>(n));
    std::vector<uint64_t> keys(static_cast<size_t>(n)), packed;
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
        const auto* data = static_cast<const uint8_t*>(in[ko]) + in_at[ko] * op.element_bytes +
                           std::max(key.part, 0) * StorageBytes(key.type);
        LineKeys(key, data, op.in_stride[kd] * op.element_bytes, n, canonical_nan[k], keys.data());
        if (k > 0) {
          for (int64_t i = 0; i < n; ++i)
            later[static_cast<size_t>(i) * (nk - 1) + k - 1] = keys[static_cast<size_t>(i)];
        } else if (nk == 1 && keep < n) {
          // The first `keep` by (key, position): what a stable sort puts there.
          SelectSmallest(keys.data(), n, keep, BitWidth(key.type) <= 32, packed, order);
        } else {
          order.resize(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = {keys[i], i};
        }
      }
      if (nk == 1) {
        // Positions are distinct: the pairs' order is the stable one.
        if (keep == n) std::sort(order.begin(), order.end());
      } else {
        // Lexicographic over the keys, then by position: a total order, so
        // any sort gives the stable result.
        auto before = [&](const KeyAt& a, const KeyAt& b) {
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
      for (size_t o = 0; o < p.operands.size(); ++o) {
        const SortPlan::Operand& op = p.operands[o];
        if (op.unread) continue;
        const auto e = static_cast<size_t>(op.element_bytes);
        const int64_t is = op.in_stride[kd], os = op.out_stride[kd];
        const uint8_t* from = static_cast<const uint8_t*>(in[o]) + in_at[o] * op.element_bytes;
        uint8_t* to = static_cast<uint8_t*>(out[o]) + out_at[o] * op.element_bytes;
        int64_t step = is;
        if (overlaps[o]) {
          // The line copied out first: the result is the operand's memory.
          line.resize(static_cast<size_t>(n) * e);
          for (int64_t i = 0; i < n; ++i)
            std::memcpy(line.data() + static_cast<size_t>(i) * e, from + i * is * op.element_bytes,
                        e);
          from = line.data();
          step = 1;
        }
        // Copies of a compile-time size (one move each) for the usual
        // element sizes.
        auto gather = [&]<size_t B>(std::integral_constant<size_t, B>) {
          for (int64_t j = 0; j < keep; ++j) {
            const int64_t i = order[static_cast<size_t>(j)].second;
            std::memcpy(to + j * os * int64_t{B}, from + i * step * int64_t{B}, B);
          }
        };
        switch (e) {
          case 1:
            gather(std::integral_constant<size_t, 1>{});
            break;
          case 2:
            gather(std::integral_constant<size_t, 2>{});
            break;
          case 4:
            gather(std::integral_constant<size_t, 4>{});
            break;
          case 8:
            gather(std::integral_constant<size_t, 8>{});
            break;
          default:
            for (int64_t j = 0; j < keep; ++j) {
              const int64_t i = order[static_cast<size_t>(j)].second;
              std::memcpy(to + j * os * op.element_bytes, from + i * step * op.element_bytes, e);
            }
        }
      }
    }
  });
}

std::string TopKPlan::Invalid() const {
  if (!SortKeySupported(type)) return "values of " + std::string(PrimitiveTypeName(type));
  if (index_type != PrimitiveType::kS32 && index_type != PrimitiveType::kS64 &&
      index_type != PrimitiveType::kU32 && index_type != PrimitiveType::kU64) {
    return "indices of " + std::string(PrimitiveTypeName(index_type));
  }
  if (rows < 0 || n < 0 || k < 0 || k > n) return "k of n";
  return "";
}

std::string TopKPlan::ToString() const {
  return std::string(PrimitiveTypeName(type)) + (largest ? " largest " : " smallest ") +
         std::to_string(k) + " of [" + std::to_string(rows) + "x(" + std::to_string(n) + ")], " +
         std::string(PrimitiveTypeName(index_type)) + " indices";
}

void RunTopK(const TopKPlan& p, const void* x, void* values, void* indices) {
  if (p.rows == 0 || p.k == 0) return;
  const int64_t e = StorageBytes(p.type), ie = StorageBytes(p.index_type);
  const SortKey key{0, -1, p.type, p.largest, false};
  const int64_t grain = std::max<int64_t>(1, (1 << 14) / p.n);
  ParallelFor(p.rows, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> keys(static_cast<size_t>(p.n)), packed;
    std::vector<KeyAt> best;
    for (int64_t r = begin; r < end; ++r) {
      const uint8_t* row = static_cast<const uint8_t*>(x) + r * p.n * e;
      LineKeys(key, row, e, p.n, 0, keys.data());
      SelectSmallest(keys.data(), p.n, p.k, BitWidth(p.type) <= 32, packed, best);
      auto* v = static_cast<uint8_t*>(values) + r * p.k * e;
      auto* ix = static_cast<uint8_t*>(indices) + r * p.k * ie;
      for (int64_t j = 0; j < p.k; ++j) {
        const int64_t i = best[static_cast<size_t>(j)].second;
        std::memcpy(v + j * e, row + i * e, static_cast<size_t>(e));
        if (ie == 4) {
          const auto i32 = static_cast<uint32_t>(i);
          std::memcpy(ix + j * 4, &i32, 4);
        } else {
          std::memcpy(ix + j * 8, &i, 8);
        }
      }
    }
  });
}

}  // namespace uir::runtime
