// A convolution thunk: RunConv over three slices.
#ifndef UIR_RUNTIME_CONV_THUNK_H_
#define UIR_RUNTIME_CONV_THUNK_H_

#include <memory>
#include <string>

#include "hlo/primitive_type.h"
#include "runtime/conv.h"
#include "runtime/thunk.h"

namespace uir::runtime {

class ConvThunk final : public Thunk {
 public:
  // Checks the plan (ConvPlan::Invalid) and that each slice holds every
  // element the plan's strides reach. `storage` as GemmThunk's: f32 or f64,
  // or a narrow float widened to f32 and rounded back once.
  static std::unique_ptr<ConvThunk> Create(std::string name, const ConvPlan& plan,
                                           const BufferSlice& input, const BufferSlice& kernel,
                                           const BufferSlice& out,
                                           hlo::PrimitiveType storage = hlo::PrimitiveType::kF32);

  const ConvPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  ConvThunk(std::string name, const ConvPlan& plan, const BufferSlice& input,
            const BufferSlice& kernel, const BufferSlice& out, hlo::PrimitiveType storage)
      : Thunk(Kind::kConv, std::move(name),
              {BufferUse::Read(input), BufferUse::Read(kernel), BufferUse::Write(out)}),
        plan_(plan),
        input_(input),
        kernel_(kernel),
        out_(out),
        storage_(storage) {}
  std::string Details() const override;

  ConvPlan plan_;
  BufferSlice input_, kernel_, out_;
  hlo::PrimitiveType storage_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONV_THUNK_H_
