// The worker threads that kernels run on: a oneTBB arena of a fixed size.
#ifndef UIR_SUPPORT_THREAD_POOL_H_
#define UIR_SUPPORT_THREAD_POOL_H_

#include <cstdint>
#include <type_traits>
#include <vector>

namespace uir {

// The number of worker threads (the calling thread included): UIR_NUM_THREADS
// if it is set to a positive integer, else the CPUs this process may run on.
// Fixed at the first call.
int NumThreads();

// The index of the calling thread among the workers: 0 for a thread outside
// them (the caller of a run), 1.. for the others.
int CurrentThreadIndex();

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

// Runs tasks 0..n-1 of a DAG over the worker threads: a task starts once
// every task with an edge to it (successors[u] holds v for an edge u -> v;
// in_degree[v] counts them) has finished. `fn(ctx, task)` runs a task;
// returns when all have run. If a task throws, the tasks not yet started
// are skipped and the first exception is rethrown on the calling thread.
// Edges point forward (u < v), so index order is a valid order: inside a
// ParallelFor chunk, or with one thread, the tasks run in it on the
// calling thread.
using TaskFn = void (*)(void* ctx, int64_t task);
void RunDag(const std::vector<std::vector<int32_t>>& successors,
            const std::vector<int32_t>& in_degree, TaskFn fn, void* ctx);

}  // namespace uir

#endif  // UIR_SUPPORT_THREAD_POOL_H_
