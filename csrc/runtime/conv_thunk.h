// A convolution thunk: RunConv over three slices.
#ifndef UIR_RUNTIME_CONV_THUNK_H_
#define UIR_RUNTIME_CONV_THUNK_H_

#include <memory>
#include <string>

#include "runtime/conv.h"
#include "runtime/thunk.h"

namespace uir::runtime {

class ConvThunk final : public Thunk {
 public:
  // Checks the plan (ConvPlan::Invalid) and that each slice holds every
  // element the plan's strides reach.
  static std::unique_ptr<ConvThunk> Create(std::string name, const ConvPlan& plan,
                                           const BufferSlice& input, const BufferSlice& kernel,
                                           const BufferSlice& out);

  const ConvPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  ConvThunk(std::string name, const ConvPlan& plan, const BufferSlice& input,
            const BufferSlice& kernel, const BufferSlice& out)
      : Thunk(Kind::kConv, std::move(name),
              {BufferUse::Read(input), BufferUse::Read(kernel), BufferUse::Write(out)}),
        plan_(plan),
        input_(input),
        kernel_(kernel),
        out_(out) {}
  std::string Details() const override { return plan_.ToString(); }

  ConvPlan plan_;
  BufferSlice input_, kernel_, out_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONV_THUNK_H_
