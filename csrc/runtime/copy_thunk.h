// A copy thunk: bytes from one slice to another of the same size.
#ifndef UIR_RUNTIME_COPY_THUNK_H_
#define UIR_RUNTIME_COPY_THUNK_H_

#include <memory>
#include <string>

#include "runtime/thunk.h"

namespace uir::runtime {

class CopyThunk final : public Thunk {
 public:
  // Checks equal sizes and that the slices do not overlap.
  static std::unique_ptr<CopyThunk> Create(std::string name, const BufferSlice& source,
                                           const BufferSlice& destination);

  // One memcpy; a large copy is split over the worker threads.
  void Execute(const ExecuteParams& params) const override;

 private:
  CopyThunk(std::string name, const BufferSlice& source, const BufferSlice& destination)
      : Thunk(Kind::kCopy, std::move(name),
              {BufferUse::Read(source), BufferUse::Write(destination)}),
        source_(source),
        destination_(destination) {}

  BufferSlice source_, destination_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_COPY_THUNK_H_
