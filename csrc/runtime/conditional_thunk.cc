// Conditional thunks: read the selector, run one branch.
#include "runtime/conditional_thunk.h"

#include <cstring>

#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<ConditionalThunk> ConditionalThunk::Create(std::string name,
                                                           const BufferSlice& selector,
                                                           std::vector<ThunkExecutor> branches) {
  CheckSlices(name, {selector});
  UIR_CHECK(!branches.empty()) << "conditional thunk " << name << " has no branches";
  UIR_CHECK((selector.size == 1 && branches.size() == 2) || selector.size == 4)
      << "conditional thunk " << name << ": a " << selector.size << "-byte selector for "
      << branches.size() << " branches";
  std::vector<const ThunkExecutor*> sequences;
  for (const ThunkExecutor& b : branches) sequences.push_back(&b);
  std::vector<BufferUse> uses = UsesOf(sequences, {BufferUse::Read(selector)});
  return std::unique_ptr<ConditionalThunk>(
      new ConditionalThunk(std::move(name), std::move(uses), selector, std::move(branches)));
}

void ConditionalThunk::Execute(const ExecuteParams& params) const {
  const uint8_t* at = params.At(selector_);
  size_t branch = 0;
  if (selector_.size == 1) {
    branch = *at != 0 ? 0 : 1;
  } else {
    int32_t index;
    std::memcpy(&index, at, sizeof(index));
    branch = index < 0 || static_cast<size_t>(index) >= branches_.size()
                 ? branches_.size() - 1
                 : static_cast<size_t>(index);
  }
  branches_[branch].Execute(params);
}

std::vector<const ThunkExecutor*> ConditionalThunk::nested() const {
  std::vector<const ThunkExecutor*> out;
  for (const ThunkExecutor& b : branches_) out.push_back(&b);
  return out;
}

}  // namespace uir::runtime
