// Copy thunks: memcpy, in chunks over the pool when large.
#include "runtime/copy_thunk.h"

#include <algorithm>
#include <cstring>

#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {
// One thread copies about as fast as memory allows up to a few MiB; past
// that, two streams keep more misses in flight.
constexpr int64_t kChunk = int64_t{1} << 21;
}  // namespace

std::unique_ptr<CopyThunk> CopyThunk::Create(std::string name, const BufferSlice& source,
                                             const BufferSlice& destination) {
  CheckSlices(name, {source, destination});
  UIR_CHECK(source.size == destination.size)
      << "copy thunk " << name << ": " << source.size << " bytes into " << destination.size;
  UIR_CHECK(!source.Overlaps(destination)) << "copy thunk " << name << ": " << source.ToString()
                                           << " overlaps " << destination.ToString();
  return std::unique_ptr<CopyThunk>(new CopyThunk(std::move(name), source, destination));
}

void CopyThunk::Execute(const ExecuteParams& params) const {
  const uint8_t* from = params.At(source_);
  uint8_t* to = params.At(destination_);
  const int64_t bytes = source_.size;
  if (bytes < 2 * kChunk || NumThreads() == 1) {
    std::memcpy(to, from, static_cast<size_t>(bytes));
    return;
  }
  const int64_t chunks = (bytes + kChunk - 1) / kChunk;
  ParallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    const int64_t lo = begin * kChunk;
    const int64_t hi = std::min(bytes, end * kChunk);
    std::memcpy(to + lo, from + lo, static_cast<size_t>(hi - lo));
  });
}

}  // namespace uir::runtime
