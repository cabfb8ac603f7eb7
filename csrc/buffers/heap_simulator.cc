#include "buffers/heap_simulator.h"

#include <algorithm>
#include <numeric>

namespace uir::buffers {

namespace {

int64_t RoundUp(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Placed items indexed by blocks of time, so that finding the items that
// overlap a range in time looks only at the blocks it covers.
class TimeIndex {
 public:
  TimeIndex(int64_t end_time, size_t items)
      : block_(std::max<int64_t>(1, (end_time + 1023) / 1024)),
        blocks_(static_cast<size_t>(end_time / block_ + 1)),
        stamp_(items, -1) {}

  void Add(int64_t item, const analysis::LiveRange& r) {
    for (int64_t b = r.start / block_; b <= r.end / block_; ++b) blocks_[b].push_back(item);
  }

  // Items whose blocks meet `r` (each once); the caller checks real overlap.
  template <typename F>
  void ForEachNear(const analysis::LiveRange& r, int64_t query, F f) {
    for (int64_t b = r.start / block_; b <= r.end / block_; ++b) {
      for (int64_t item : blocks_[b]) {
        if (stamp_[item] == query) continue;
        stamp_[item] = query;
        f(item);
      }
    }
  }

 private:
  int64_t block_;
  std::vector<std::vector<int64_t>> blocks_;
  std::vector<int64_t> stamp_;
};

}  // namespace

HeapResult PackHeap(const std::vector<HeapItem>& items, int64_t alignment) {
  HeapResult result;
  result.offsets.assign(items.size(), 0);
  int64_t end_time = 0;
  for (const HeapItem& it : items) end_time = std::max(end_time, it.range.end);
  std::vector<int64_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const HeapItem& x = items[a];
    const HeapItem& y = items[b];
    if (x.bytes != y.bytes) return x.bytes > y.bytes;
    const int64_t lx = x.range.end - x.range.start;
    const int64_t ly = y.range.end - y.range.start;
    if (lx != ly) return lx > ly;
    return x.range.start < y.range.start;
  });
  TimeIndex index(end_time, items.size());
  std::vector<std::pair<int64_t, int64_t>> taken;  // (offset, end) of conflicting chunks
  int64_t query = 0;
  for (int64_t k : order) {
    const HeapItem& it = items[k];
    if (it.bytes == 0) continue;  // tokens and empty arrays take no bytes
    taken.clear();
    index.ForEachNear(it.range, query++, [&](int64_t other) {
      if (items[other].range.Overlaps(it.range))
        taken.emplace_back(result.offsets[other], result.offsets[other] + items[other].bytes);
    });
    std::sort(taken.begin(), taken.end());
    // Best fit: the smallest free gap that holds the chunk.
    int64_t best = -1;
    int64_t best_gap = INT64_MAX;
    int64_t cursor = 0;
    for (const auto& [lo, hi] : taken) {
      const int64_t start = RoundUp(cursor, alignment);
      if (lo > start && lo - start >= it.bytes && lo - start < best_gap) {
        best = start;
        best_gap = lo - start;
      }
      cursor = std::max(cursor, hi);
    }
    if (best < 0) best = RoundUp(cursor, alignment);
    result.offsets[k] = best;
    result.heap_bytes = std::max(result.heap_bytes, best + it.bytes);
    index.Add(k, it.range);
  }
  result.heap_bytes = RoundUp(result.heap_bytes, alignment);
  return result;
}

}  // namespace uir::buffers
