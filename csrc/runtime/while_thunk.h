// A while thunk: a condition sequence and a body sequence over the loop
// state in place, until the condition's predicate is false.
#ifndef UIR_RUNTIME_WHILE_THUNK_H_
#define UIR_RUNTIME_WHILE_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"
#include "runtime/thunk_executor.h"

namespace uir::runtime {

// A call out of a compiled loop into the layer that built it, for what the
// loop's code does not do itself: where a dynamic window lies on this
// iteration (the returned byte offset), or a block copy at start indices
// read on this iteration (returns 0). `ctx` stays valid while the thunk lives.
struct LoopHook {
  int64_t (*fn)(const void* ctx, uint8_t* const* allocations) = nullptr;
  const void* ctx = nullptr;
};

// A whole loop compiled as one function (condition, test, body, again) on
// the run's allocations, with one thread's `scratch`; `hooks` are the
// calls out its code makes, and `constants` the memory the executable keeps
// that its kernels read, by index (the code holds no address of this
// process, so it can be stored and loaded in another).
using LoopFn = void (*)(uint8_t* const* allocations, void* scratch, const LoopHook* hooks,
                        const void* const* constants);

class WhileThunk final : public Thunk {
 public:
  // `predicate`: the condition's result, one byte (nonzero: run the body
  // again). With `native`, Execute calls it (with `scratch_bytes` of the
  // calling thread's scratch) instead of running the sequences.
  static std::unique_ptr<WhileThunk> Create(std::string name, ThunkExecutor condition,
                                            ThunkExecutor body, const BufferSlice& predicate,
                                            LoopFn native = nullptr, int64_t scratch_bytes = 0,
                                            std::vector<LoopHook> hooks = {},
                                            std::vector<const void*> constants = {});

  bool is_native() const { return native_ != nullptr; }
  void Execute(const ExecuteParams& params) const override;
  std::vector<const ThunkExecutor*> nested() const override { return {&condition_, &body_}; }

 private:
  WhileThunk(std::string name, std::vector<BufferUse> uses, ThunkExecutor condition,
             ThunkExecutor body, const BufferSlice& predicate, LoopFn native, int64_t scratch_bytes,
             std::vector<LoopHook> hooks, std::vector<const void*> constants)
      : Thunk(Kind::kWhile, std::move(name), std::move(uses)),
        condition_(std::move(condition)),
        body_(std::move(body)),
        predicate_(predicate),
        native_(native),
        scratch_bytes_(scratch_bytes),
        hooks_(std::move(hooks)),
        constants_(std::move(constants)) {}
  std::string Details() const override;

  ThunkExecutor condition_, body_;
  BufferSlice predicate_;
  LoopFn native_ = nullptr;
  int64_t scratch_bytes_ = 0;
  std::vector<LoopHook> hooks_;
  std::vector<const void*> constants_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_WHILE_THUNK_H_
