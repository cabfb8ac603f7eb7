// Kernel thunks: buffer tables built on the stack, parts split over the pool.
#include "runtime/kernel_thunk.h"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "runtime/profiler.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

struct Scratch {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data;
  int64_t bytes = 0;

  void* Get(int64_t need) {
    if (need > bytes) {
      const int64_t size = (std::max<int64_t>(need, 4096) + 63) / 64 * 64;
      data.reset(std::aligned_alloc(64, static_cast<size_t>(size)));
      if (data == nullptr) throw std::bad_alloc();
      bytes = size;
    }
    return data.get();
  }
};

}  // namespace

void* ThreadScratch(int64_t bytes) {
  thread_local Scratch scratch;
  return scratch.Get(bytes);
}

void LaunchKernel(const KernelPart& part, void* const* buffers, const ExecuteParams* profile,
                  const Thunk* thunk) {
  KernelFn fn = part.fn;
  if (part.streaming != nullptr) {
    bool aligned = true;
    for (int k : part.streaming_buffers) {
      aligned = aligned && reinterpret_cast<uintptr_t>(buffers[k]) % 64 == 0;
    }
    if (aligned) fn = part.streaming;
  }
  const int threads = NumThreads();
  if (threads <= 1 || part.num_parallel <= 1 || part.bytes_moved < kParallelBytes) {
    fn(buffers, 0, part.num_parallel, ThreadScratch(part.scratch_bytes));
    return;
  }
  // A few chunks per thread balance uneven units without much overhead.
  const int64_t grain = std::max<int64_t>(1, part.num_parallel / (4 * threads));
  Profiler* profiler = profile != nullptr ? profile->profiler : nullptr;
  ParallelFor(part.num_parallel, grain, [&](int64_t begin, int64_t end) {
    auto run = [&] { fn(buffers, begin, end, ThreadScratch(part.scratch_bytes)); };
    if (profiler == nullptr) {
      run();
    } else {  // at the level the thunk's sequence runs it, one below its own
      profiler->Time(thunk, CurrentThreadIndex(), profile->depth, /*chunk=*/true, run);
    }
  });
}

std::unique_ptr<KernelThunk> KernelThunk::Create(std::string name, std::vector<KernelPart> parts,
                                                 std::vector<BufferUse> uses) {
  UIR_CHECK(!parts.empty()) << "kernel thunk " << name << " has no parts";
  for (const KernelPart& p : parts) {
    UIR_CHECK(p.fn != nullptr) << "kernel thunk " << name << ": part " << p.name << " has no code";
    UIR_CHECK(p.num_parallel >= 1) << "kernel thunk " << name << ": part " << p.name << " has "
                                   << p.num_parallel << " parallel ids";
    for (int k : p.streaming_buffers) {
      UIR_CHECK(k >= 0 && static_cast<size_t>(k) < p.buffers.size())
          << "kernel thunk " << name << ": part " << p.name << " streams to buffer " << k << " of "
          << p.buffers.size();
    }
  }
  std::vector<BufferSlice> slices;
  for (const BufferUse& u : uses) slices.push_back(u.slice);
  CheckSlices(name, slices);
  return std::unique_ptr<KernelThunk>(
      new KernelThunk(std::move(name), std::move(parts), std::move(uses)));
}

void KernelThunk::Execute(const ExecuteParams& params) const {
  BufferTable table;
  for (const KernelPart& part : parts_) {
    void** buffers = table.Get(part.buffers.size());
    for (size_t k = 0; k < part.buffers.size(); ++k) buffers[k] = params.At(part.buffers[k]);
    LaunchKernel(part, buffers, &params, this);
  }
}

std::string KernelThunk::Details() const {
  std::string out = "[";
  for (size_t k = 0; k < parts_.size(); ++k) {
    if (k > 0) out += ", ";
    out += parts_[k].name;
    if (parts_[k].num_parallel > 1) out += " x" + std::to_string(parts_[k].num_parallel);
  }
  return out + "]";
}

}  // namespace uir::runtime
