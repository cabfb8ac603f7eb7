// Call thunks: the callee's uses are the call's.
#include "runtime/call_thunk.h"

namespace uir::runtime {

std::unique_ptr<CallThunk> CallThunk::Create(std::string name, ThunkExecutor callee) {
  std::vector<BufferUse> uses = UsesOf({&callee}, {});
  return std::unique_ptr<CallThunk>(
      new CallThunk(std::move(name), std::move(uses), std::move(callee)));
}

}  // namespace uir::runtime
