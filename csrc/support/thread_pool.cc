// ParallelFor on a oneTBB task arena sized by NumThreads().
#include "support/thread_pool.h"

#include <atomic>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "support/error.h"
#include "tbb/blocked_range.h"
#include "tbb/info.h"
#include "tbb/parallel_for.h"
#include "tbb/task_arena.h"
#include "tbb/task_group.h"

namespace uir {
namespace {

int ThreadsFromEnvironment() {
  const char* text = std::getenv("UIR_NUM_THREADS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value <= 0 || value > 4096) {
    throw UserError(ErrorKind::kParse,
                    "UIR_NUM_THREADS must be a positive integer, got '" + std::string(text) + "'");
  }
  return static_cast<int>(value);
}

// Set while this thread runs a chunk of a ParallelFor.
thread_local bool in_chunk = false;

tbb::task_arena& Arena() {
  // Leaked on purpose: destroying an arena during interpreter shutdown, while
  // TBB's own globals may already be gone, is a known source of crashes.
  static tbb::task_arena* arena = new tbb::task_arena(NumThreads());
  return *arena;
}

}  // namespace

int NumThreads() {
  static const int threads = [] {
    int n = ThreadsFromEnvironment();
    return n > 0 ? n : tbb::info::default_concurrency();
  }();
  return threads;
}

int CurrentThreadIndex() {
  const int index = tbb::this_task_arena::current_thread_index();
  return index < 0 ? 0 : index;
}

void ParallelFor(int64_t n, int64_t grain, ChunkFn fn, void* ctx) {
  UIR_CHECK(grain >= 1) << "ParallelFor grain must be >= 1, got " << grain;
  if (n <= 0) return;
  // Inside a chunk the threads are busy already: a nested loop runs on
  // this thread. It also never waits, so the pool cannot hand this thread
  // another chunk of the outer loop while this one's state (thread-local
  // scratch) is in use.
  if (n <= grain || NumThreads() == 1 || in_chunk) {
    fn(ctx, 0, n);
    return;
  }
  // oneTBB cancels the other chunks and rethrows the first exception on this
  // thread, which is the contract above. Isolated: while this thread waits
  // for the loop it runs only the loop's chunks, never another task of the
  // arena (an async-done picked up by the thread running that async work
  // would wait for itself).
  Arena().execute([&] {
    tbb::this_task_arena::isolate([&] {
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                        [&](const tbb::blocked_range<int64_t>& r) {
                          struct Mark {
                            bool was = in_chunk;
                            Mark() { in_chunk = true; }
                            ~Mark() { in_chunk = was; }
                          } mark;
                          fn(ctx, r.begin(), r.end());
                        });
    });
  });
}

void RunDag(const std::vector<std::vector<int32_t>>& successors,
            const std::vector<int32_t>& in_degree, TaskFn fn, void* ctx) {
  const size_t n = successors.size();
  UIR_CHECK(in_degree.size() == n)
      << "RunDag: " << n << " tasks, " << in_degree.size() << " in-degrees";
  if (n == 0) return;
  if (NumThreads() == 1 || in_chunk) {
    for (size_t i = 0; i < n; ++i) fn(ctx, static_cast<int64_t>(i));
    return;
  }
  std::unique_ptr<std::atomic<int32_t>[]> pending(new std::atomic<int32_t>[n]);
  for (size_t i = 0; i < n; ++i) pending[i].store(in_degree[i], std::memory_order_relaxed);
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  Arena().execute([&] {
    tbb::task_group group;
    // Runs `task`, then whichever successors it readied: the first on this
    // thread (no spawn on a chain), the others as new tasks.
    std::function<void(int32_t)> run = [&](int32_t task) {
      while (task >= 0) {
        if (!failed.load(std::memory_order_relaxed)) {
          try {
            fn(ctx, task);
          } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
            failed.store(true);
          }
        }
        int32_t next = -1;
        for (int32_t s : successors[static_cast<size_t>(task)]) {
          if (pending[static_cast<size_t>(s)].fetch_sub(1, std::memory_order_acq_rel) != 1) {
            continue;
          }
          if (next < 0) {
            next = s;
          } else {
            group.run([&run, s] { run(s); });
          }
        }
        task = next;
      }
    };
    // Isolated as ParallelFor is: the waiting thread takes only this DAG's
    // tasks.
    tbb::this_task_arena::isolate([&] {
      for (size_t i = 0; i < n; ++i) {
        if (in_degree[i] == 0) group.run([&run, i] { run(static_cast<int32_t>(i)); });
      }
      group.wait();
    });
  });
  if (error) std::rethrow_exception(error);
}

}  // namespace uir
