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

// Buffers of at least this many bytes start a page (4096 bytes), others a
// 64-byte line. A streaming kernel whose input starts a little further
// into its page than its output (NumPy's large arrays start 16 bytes in,
// aligned_alloc's large blocks 64) has each load match the page offset of
// the store just before it, which the core takes for a dependence (4K
// aliasing) and waits on: tanh over 16M floats of NumPy's, 2 threads,
// 7.2 -> 2.7 ms. An output at or a little below its inputs' page offset
// matches only stores still to come.
constexpr int64_t kPageAlignedBytes = int64_t{64} << 10;
constexpr bool PageAligned(int64_t bytes) { return bytes >= kPageAlignedBytes; }

// At most this many bytes are kept.
constexpr int64_t kKeptBytes = int64_t{256} << 20;

// Memory of `bytes` bytes (aligned as above), reused when a buffer of that
// size was given back; fresh buffers of 4 MiB or more are advised to use
// transparent huge pages. Thread-safe. Throws std::bad_alloc.
void* TakeBuffer(int64_t bytes);
// Returns a buffer from TakeBuffer. The pool keeps at most kKeptBytes:
// to keep this one it frees those given back longest ago (a larger buffer
// must not find the pool full of stale smaller ones); one larger than the
// limit is freed.
void GiveBuffer(void* data, int64_t bytes);
// The bytes kept now, and (for tests) a different limit, down to which the
// oldest buffers are freed at once; returns the old limit.
int64_t KeptBytes();
int64_t SetKeptLimitForTesting(int64_t limit);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_BUFFER_POOL_H_
