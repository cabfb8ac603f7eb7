// While thunks: the condition's byte read between runs of the sequences.
#include "runtime/while_thunk.h"

#include "runtime/kernel_thunk.h"
#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<WhileThunk> WhileThunk::Create(std::string name, ThunkExecutor condition,
                                               ThunkExecutor body, const BufferSlice& predicate,
                                               LoopFn native, int64_t scratch_bytes,
                                               std::vector<LoopHook> hooks,
                                               std::vector<const void*> constants) {
  CheckSlices(name, {predicate});
  UIR_CHECK(predicate.size == 1) << "while thunk " << name << ": a predicate of " << predicate.size
                                 << " bytes";
  UIR_CHECK(scratch_bytes >= 0) << "while thunk " << name << ": negative scratch";
  for (const LoopHook& h : hooks) {
    UIR_CHECK(native != nullptr && h.fn != nullptr)
        << "while thunk " << name << ": a hook without "
        << (native == nullptr ? "a native loop" : "a function");
  }
  UIR_CHECK(native != nullptr || constants.empty())
      << "while thunk " << name << ": constants without a native loop";
  std::vector<BufferUse> uses = UsesOf({&condition, &body}, {BufferUse::Write(predicate)});
  return std::unique_ptr<WhileThunk>(
      new WhileThunk(std::move(name), std::move(uses), std::move(condition), std::move(body),
                     predicate, native, scratch_bytes, std::move(hooks), std::move(constants)));
}

void WhileThunk::Execute(const ExecuteParams& params) const {
  if (native_ != nullptr) {
    native_(params.allocations, ThreadScratch(scratch_bytes_), hooks_.data(), constants_.data());
    return;
  }
  const uint8_t* predicate = params.At(predicate_);
  while (true) {
    condition_.Execute(params);
    if (*predicate == 0) return;
    body_.Execute(params);
  }
}

std::string WhileThunk::Details() const {
  std::string hooks;
  if (!hooks_.empty()) hooks = ", " + std::to_string(hooks_.size()) + " hooks";
  return (native_ != nullptr ? "native" + hooks + ", predicate " : "predicate ") +
         predicate_.ToString();
}

}  // namespace uir::runtime
