// A kernel thunk: compiled iGraphs run one after another on the run's
// memory, each over its parallel ids on the worker threads.
#ifndef UIR_RUNTIME_KERNEL_THUNK_H_
#define UIR_RUNTIME_KERNEL_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"

namespace uir::runtime {

// A compiled iGraph: runs parallel ids [begin, end) on `buffers` (its dram
// iPointers in order) with `scratch` (the calling thread's, ScratchBytes
// of the iGraph). Returns 0.
using KernelFn = int32_t (*)(void* const* buffers, int64_t parallel_begin, int64_t parallel_end,
                             void* scratch);

// This thread's scratch for kernels, at least `bytes`, 64-byte aligned;
// valid until the next call on this thread.
void* ThreadScratch(int64_t bytes);

struct KernelPart {
  std::string name;  // the iGraph's
  KernelFn fn = nullptr;
  // A variant with non-temporal stores, run instead when the buffers at
  // these positions are 64-byte aligned.
  KernelFn streaming = nullptr;
  std::vector<int> streaming_buffers;
  int64_t scratch_bytes = 0;
  int64_t num_parallel = 1;
  int64_t bytes_moved = 0;  // dram traffic: decides whether to use the workers
  std::vector<BufferRef> buffers;
};

// Below this much dram traffic a part runs on the calling thread: waking
// the workers costs more than the work.
inline constexpr int64_t kParallelBytes = int64_t{1} << 18;

// A kernel's buffer table: on the stack up to 16 buffers (every kernel
// seen so far), on the heap past that.
class BufferTable {
 public:
  void** Get(size_t count) {
    if (count <= kInline) return inline_;
    heap_.reset(new void*[count]);
    return heap_.get();
  }

 private:
  static constexpr size_t kInline = 16;
  void* inline_[kInline];
  std::unique_ptr<void*[]> heap_;
};

// Runs `part` on `buffers`: on the calling thread when small, else its
// parallel ids split in a few chunks per worker thread. With `profile`
// (the params the thunk runs with, one level below its own), each chunk's
// time is recorded for `thunk` at that level.
void LaunchKernel(const KernelPart& part, void* const* buffers,
                  const ExecuteParams* profile = nullptr, const Thunk* thunk = nullptr);

class KernelThunk final : public Thunk {
 public:
  // Checks that every part has code, a positive parallel count and as many
  // buffers as it has positions to stream; `uses` are the node's inputs
  // (read) and outputs (written).
  static std::unique_ptr<KernelThunk> Create(std::string name, std::vector<KernelPart> parts,
                                             std::vector<BufferUse> uses);

  const std::vector<KernelPart>& parts() const { return parts_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  KernelThunk(std::string name, std::vector<KernelPart> parts, std::vector<BufferUse> uses)
      : Thunk(Kind::kKernel, std::move(name), std::move(uses)), parts_(std::move(parts)) {}
  std::string Details() const override;

  std::vector<KernelPart> parts_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_KERNEL_THUNK_H_
