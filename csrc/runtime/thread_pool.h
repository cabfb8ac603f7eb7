// The worker threads that kernels run on: a oneTBB arena of a fixed size.
#ifndef UIR_RUNTIME_THREAD_POOL_H_
#define UIR_RUNTIME_THREAD_POOL_H_

#include <cstdint>
#include <type_traits>

namespace uir::runtime {

// The number of worker threads (the calling thread included): UIR_NUM_THREADS
// if it is set to a positive integer, else the CPUs this process may run on.
// Fixed at the first call.
int NumThreads();

// A chunk of work: `fn(ctx, begin, end)` handles indices [begin, end). C-callable
// so that JIT-compiled code can be handed to ParallelFor directly.
using ChunkFn = void (*)(void* ctx, int64_t begin, int64_t end);

// Runs `fn` over [0, n) in chunks of at least `grain` indices (grain >= 1),
// spread over NumThreads() threads; returns when every chunk has finished.
// Called from inside a chunk, it runs all of [0, n) on the calling thread.
// If chunks throw, the remaining chunks are cancelled and the first exception
// is rethrown on the calling thread. n <= 0 does nothing.
void ParallelFor(int64_t n, int64_t grain, ChunkFn fn, void* ctx);

// ParallelFor with any callable `body(begin, end)`.
template <typename Body>
void ParallelFor(int64_t n, int64_t grain, Body&& body) {
  ParallelFor(
      n, grain,
      [](void* ctx, int64_t begin, int64_t end) {
        (*static_cast<std::remove_reference_t<Body>*>(ctx))(begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_THREAD_POOL_H_
