// Asynchronous operations: an async-start thunk launches its work on a
// thread of its own and returns; the matching done thunk waits for it. In
// between, the executor runs whatever does not depend on the work (the
// latency-hiding schedule put it there), on the calling thread or the
// workers. The work's buffers stay reserved until the done: buffer
// assignment keeps an async op's operands and results live from start to
// done, and the done thunk declares the work's uses, so nothing that reads
// its results runs before the done.
#ifndef UIR_RUNTIME_ASYNC_THUNK_H_
#define UIR_RUNTIME_ASYNC_THUNK_H_

#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/thunk.h"

namespace uir::runtime {

// One run's work in flight, by the start thunk that launched it.
class AsyncRuns {
 public:
  AsyncRuns() = default;
  AsyncRuns(const AsyncRuns&) = delete;
  AsyncRuns& operator=(const AsyncRuns&) = delete;
  // Waits for work nobody waited for (a run cut short by an error).
  ~AsyncRuns();

  void Launch(const Thunk* start, std::function<void()> work);
  // Waits for what `start` launched; rethrows what the work threw. A second
  // wait (a done after an update) returns at once. Throws InternalError
  // when `start` launched nothing in this run.
  void Wait(const Thunk* start);

 private:
  std::mutex mu_;
  std::unordered_map<const Thunk*, std::future<void>> running_;
};

class AsyncStartThunk final : public Thunk {
 public:
  // `work` computes the async op's results (its uses are the start's).
  static std::unique_ptr<AsyncStartThunk> Create(std::string name, std::unique_ptr<Thunk> work);
  // Launches the work in params.async, or without one runs it here.
  void Execute(const ExecuteParams& params) const override;
  bool MeetsOthers() const override { return work_->MeetsOthers(); }

 private:
  AsyncStartThunk(std::string name, std::unique_ptr<Thunk> work);
  std::string Details() const override;
  std::unique_ptr<Thunk> work_;
};

// An async-done, or an async-update between start and done (which reads
// and passes on the work's results, so it too must wait for them).
class AsyncDoneThunk final : public Thunk {
 public:
  // Waits for `start`'s work, then runs `then` (the done's own step, which
  // places the results; null when the work left them where they belong).
  // Declares the work's uses as well as its own.
  static std::unique_ptr<AsyncDoneThunk> Create(std::string name, const AsyncStartThunk* start,
                                                std::unique_ptr<Thunk> then);
  void Execute(const ExecuteParams& params) const override;
  bool MeetsOthers() const override { return then_ != nullptr && then_->MeetsOthers(); }

 private:
  AsyncDoneThunk(std::string name, const AsyncStartThunk* start, std::unique_ptr<Thunk> then,
                 std::vector<BufferUse> uses);
  std::string Details() const override;
  const AsyncStartThunk* start_;
  std::unique_ptr<Thunk> then_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_ASYNC_THUNK_H_
