// Timings of one run, when asked for: a start and end per thunk executed
// (thunks inside while loops, conditionals and calls included, as often as
// they ran), and per worker's share of a kernel split over the threads.
// Off unless ExecuteParams::profiler is set; then each thunk costs two
// clock reads and a locked append.
#ifndef UIR_RUNTIME_PROFILER_H_
#define UIR_RUNTIME_PROFILER_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace uir::runtime {

class Thunk;

// ProfileEvent::thread of work an async-start launched (a thread of its own).
inline constexpr int32_t kAsyncThread = -1;

struct ProfileEvent {
  const Thunk* thunk = nullptr;
  int64_t start_ns = 0;  // since the profiler was made
  int64_t end_ns = 0;
  int32_t thread = 0;  // the worker that ran it (0: the calling thread; kAsyncThread)
  int32_t depth = 0;   // 0: the entry's sequence; +1 per while, conditional or call
  bool chunk = false;  // a worker's share of a kernel thunk (the thunk has its own event)
};

class Profiler {
 public:
  Profiler() : origin_(std::chrono::steady_clock::now()) {}
  int64_t Now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                origin_)
        .count();
  }
  void Record(const ProfileEvent& event);
  // Runs `fn` and records its time as an event of `thunk` (not when it
  // throws).
  template <typename Fn>
  void Time(const Thunk* thunk, int32_t thread, int32_t depth, bool chunk, Fn&& fn) {
    ProfileEvent event{thunk, Now(), 0, thread, depth, chunk};
    fn();
    event.end_ns = Now();
    Record(event);
  }
  // The events so far, in the order they ended.
  std::vector<ProfileEvent> Events() const;

 private:
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mu_;
  std::vector<ProfileEvent> events_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_PROFILER_H_
