// Host thunks: checked once, then a plain function call.
#include "runtime/host_thunk.h"

#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<HostThunk> HostThunk::Create(std::string name, std::string what, Function fn,
                                             std::vector<BufferUse> uses, bool ordered,
                                             bool fallback) {
  UIR_CHECK(fn != nullptr) << "host thunk " << name << " has no function";
  std::vector<BufferSlice> slices;
  for (const BufferUse& u : uses) slices.push_back(u.slice);
  CheckSlices(name, slices);
  return std::unique_ptr<HostThunk>(new HostThunk(std::move(name), std::move(what), std::move(fn),
                                                  std::move(uses), ordered, fallback));
}

}  // namespace uir::runtime
