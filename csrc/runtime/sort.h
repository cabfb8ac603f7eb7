// The library sort: lines of several arrays ordered by one key or by
// several in turn (lexicographically), described by numbers only (the
// Kernel Graph plans it from a sort whose comparator orders its keys
// ascending or descending, checked on every class of key values).
#ifndef UIR_RUNTIME_SORT_H_
#define UIR_RUNTIME_SORT_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "support/primitive_type.h"

namespace uir::runtime {

// One key of a sort: an operand's values (or one part of its complex
// values), ascending or descending. Float keys compare by their total
// order (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN), or, `canonical`,
// with -0 equal to +0 and every NaN equal and above infinity.
struct SortKey {
  int operand = 0;
  int part = -1;  // 0 or 1: the real or imaginary part of a complex operand
  PrimitiveType type = PrimitiveType::kF32;  // the key's (part's) type
  bool descending = false;
  bool canonical = false;
};

// Along dimension `dim` of every operand, the elements of each line are
// put in the order of the keys, stably (equal keys keep their order): by
// the first key, elements equal there by the second, and so on. Every
// operand's output element at line position j is its input element at the
// position the keys sorted to j. Arrays are addressed by element strides.
struct SortPlan {
  static constexpr int kMaxRank = 8;
  using Dims = std::array<int64_t, kMaxRank>;
  std::vector<SortKey> keys;  // first the one that decides first
  // Positive: only the first `keep` positions of each output line are
  // read afterwards (a top-k's slice), so only they are written: the
  // smallest `keep` keys selected, in order, ties by position.
  int64_t keep = 0;
  int rank = 0, dim = 0;
  Dims size{};
  struct Operand {
    int64_t element_bytes = 4;
    Dims in_stride{}, out_stride{};
    // Its result is never read (a tuple element nobody takes): not written.
    bool unread = false;
  };
  std::vector<Operand> operands;

  int64_t Elements(const Operand& o, bool out) const;
  std::string Invalid() const;
  // "f32 ascending (canonical) [4x(8)] 2 operands"; several keys as
  // "s32 ascending, then f32 descending ...", a key of operand k as
  // "... keys in k", a complex part as "... real of k"; unread results as
  // "..., 0 and 2 unread".
  std::string ToString() const;
};

// Whether keys of `type` can be sorted.
bool SortKeySupported(PrimitiveType type);

// Runs `plan`: lines over the worker threads. `in` and `out` hold one
// pointer per operand.
void RunSort(const SortPlan& plan, const std::vector<const void*>& in,
             const std::vector<void*>& out);

// XLA's topk: in each row of n elements of a row-major array, the k
// largest (or smallest) in the total order of the values (-NaN < -inf <
// ... < -0 < +0 < ... < inf < NaN), the best first, equal values in index
// order; their values and indices, in rows of k.
struct TopKPlan {
  PrimitiveType type = PrimitiveType::kF32;
  PrimitiveType index_type = PrimitiveType::kS32;  // s32, s64, u32 or u64
  int64_t rows = 0, n = 0, k = 0;
  bool largest = true;

  std::string Invalid() const;
  // "f32 largest 16 of [256x(1024)], s32 indices".
  std::string ToString() const;
};

// Runs `plan`: rows over the worker threads.
void RunTopK(const TopKPlan& plan, const void* x, void* values, void* indices);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_SORT_H_
