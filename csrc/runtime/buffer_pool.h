// Large result buffers kept for reuse: a freed result's pages are already
// mapped, so the next call that needs the same size writes them without
// page faults (which cost as much as the kernel on streaming work).
#ifndef UIR_RUNTIME_BUFFER_POOL_H_
#define UIR_RUNTIME_BUFFER_POOL_H_

#include <cstdint>

namespace uir::runtime {

// Buffers of at least this many bytes go through the pool; smaller ones
// come from malloc as usual.
constexpr int64_t kPooledBytes = int64_t{1} << 20;

// 64-byte aligned memory of `bytes` bytes, reused when a buffer of that
// size was given back. Thread-safe. Throws std::bad_alloc.
void* TakeBuffer(int64_t bytes);
// Returns a buffer from TakeBuffer. The pool keeps at most a bounded number
// of bytes (256 MiB) and frees the rest.
void GiveBuffer(void* data, int64_t bytes);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_BUFFER_POOL_H_
