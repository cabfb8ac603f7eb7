#include "runtime/async_thunk.h"

#include <utility>

#include "runtime/profiler.h"
#include "support/error.h"

namespace uir::runtime {

AsyncRuns::~AsyncRuns() {
  for (auto& [start, future] : running_) {
    if (future.valid()) future.wait();
  }
}

void AsyncRuns::Launch(const Thunk* start, std::function<void()> work) {
  std::future<void> future = std::async(std::launch::async, std::move(work));
  std::future<void> earlier;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A start inside a loop body launches once per iteration; the done of
    // the iteration before took the last one.
    earlier = std::exchange(running_[start], std::move(future));
  }
  if (earlier.valid()) earlier.wait();
}

void AsyncRuns::Wait(const Thunk* start) {
  std::future<void> future;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = running_.find(start);
    UIR_CHECK(it != running_.end())
        << "async-done of " << start->name() << " with no work launched";
    // An async-update waited already; the done finds the work finished.
    if (!it->second.valid()) return;
    future = std::move(it->second);
  }
  future.get();
}

std::unique_ptr<AsyncStartThunk> AsyncStartThunk::Create(std::string name,
                                                         std::unique_ptr<Thunk> work) {
  UIR_CHECK(work != nullptr) << "async-start " << name << " without work";
  return std::unique_ptr<AsyncStartThunk>(new AsyncStartThunk(std::move(name), std::move(work)));
}

AsyncStartThunk::AsyncStartThunk(std::string name, std::unique_ptr<Thunk> work)
    : Thunk(Kind::kAsyncStart, std::move(name), work->buffer_uses(), work->ordered()),
      work_(std::move(work)) {}

std::string AsyncStartThunk::Details() const {
  return "launches " + std::string(KindName(work_->kind())) + " " + work_->name();
}

void AsyncStartThunk::Execute(const ExecuteParams& params) const {
  if (params.async == nullptr) {
    work_->Execute(params);
    return;
  }
  // The run's memory and profiler outlive the work: the run waits for it.
  ExecuteParams copy = params;
  const Thunk* work = work_.get();
  params.async->Launch(this, [work, copy] {
    if (copy.profiler == nullptr) {
      work->Execute(copy);
    } else {
      copy.profiler->Time(work, kAsyncThread, copy.depth, /*chunk=*/false,
                          [&] { work->Execute(copy); });
    }
  });
}

std::unique_ptr<AsyncDoneThunk> AsyncDoneThunk::Create(std::string name,
                                                       const AsyncStartThunk* start,
                                                       std::unique_ptr<Thunk> then) {
  UIR_CHECK(start != nullptr) << "async-done " << name << " without its start";
  std::vector<BufferUse> uses;
  if (then != nullptr) uses = then->buffer_uses();
  for (const BufferUse& u : start->buffer_uses()) uses.push_back(u);
  return std::unique_ptr<AsyncDoneThunk>(
      new AsyncDoneThunk(std::move(name), start, std::move(then), std::move(uses)));
}

AsyncDoneThunk::AsyncDoneThunk(std::string name, const AsyncStartThunk* start,
                               std::unique_ptr<Thunk> then, std::vector<BufferUse> uses)
    : Thunk(Kind::kAsyncDone, std::move(name), std::move(uses),
            then != nullptr ? then->ordered() : start->ordered()),
      start_(start),
      then_(std::move(then)) {}

std::string AsyncDoneThunk::Details() const {
  return "waits for " + start_->name() + (then_ == nullptr ? ", results in place" : "");
}

void AsyncDoneThunk::Execute(const ExecuteParams& params) const {
  if (params.async != nullptr) params.async->Wait(start_);
  if (then_ != nullptr) then_->Execute(params);
}

}  // namespace uir::runtime
