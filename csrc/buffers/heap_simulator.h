// The heap simulator: places chunks that are live over known time ranges
// in one address space, so that chunks live at the same time never share
// bytes, keeping the total small. Global decreasing-size best fit (XLA's
// GlobalDecreasingSizeBestFitHeap): chunks by size, largest first (then
// longest lived); each takes the smallest gap, among the chunks already
// placed that overlap it in time, that fits it, or goes on top.
#ifndef UIR_BUFFERS_HEAP_SIMULATOR_H_
#define UIR_BUFFERS_HEAP_SIMULATOR_H_

#include <cstdint>
#include <vector>

#include "analysis/liveness.h"

namespace uir::buffers {

struct HeapItem {
  int64_t bytes = 0;
  analysis::LiveRange range;
};

struct HeapResult {
  std::vector<int64_t> offsets;  // parallel to the items
  int64_t heap_bytes = 0;
};

// Offsets are multiples of `alignment`.
HeapResult PackHeap(const std::vector<HeapItem>& items, int64_t alignment);

}  // namespace uir::buffers

#endif  // UIR_BUFFERS_HEAP_SIMULATOR_H_
