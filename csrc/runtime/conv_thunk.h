// A convolution thunk: RunConv over three slices.
#ifndef UIR_RUNTIME_CONV_THUNK_H_
#define UIR_RUNTIME_CONV_THUNK_H_

#include <memory>
#include <optional>
#include <string>

#include "runtime/conv.h"
#include "runtime/thunk.h"
#include "support/primitive_type.h"

namespace uir::runtime {

class ConvThunk final : public Thunk {
 public:
  // Checks the plan (ConvPlan::Invalid) and that each slice holds every
  // element the plan's strides reach. `storage`, the result's type, as
  // GemmThunk's: f32 or f64, or a narrow float widened to f32 and rounded
  // back once. Operands of other types than the result's: floats widened
  // to the plan's precision for BLAS; integers, pred and complex numbers
  // (RunConvGeneric). `input_type` and `kernel_type` default to `storage`.
  static std::unique_ptr<ConvThunk> Create(std::string name, const ConvPlan& plan,
                                           const BufferSlice& input, const BufferSlice& kernel,
                                           const BufferSlice& out,
                                           PrimitiveType storage = PrimitiveType::kF32,
                                           std::optional<PrimitiveType> input_type = std::nullopt,
                                           std::optional<PrimitiveType> kernel_type = std::nullopt);

  const ConvPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  ConvThunk(std::string name, const ConvPlan& plan, const BufferSlice& input,
            const BufferSlice& kernel, const BufferSlice& out, PrimitiveType storage,
            PrimitiveType input_type, PrimitiveType kernel_type)
      : Thunk(Kind::kConv, std::move(name),
              {BufferUse::Read(input), BufferUse::Read(kernel), BufferUse::Write(out)}),
        plan_(plan),
        input_(input),
        kernel_(kernel),
        out_(out),
        storage_(storage),
        input_type_(input_type),
        kernel_type_(kernel_type) {}
  std::string Details() const override;
  // Whether operands and result are of one float type (the BLAS paths).
  bool Uniform() const {
    return input_type_ == storage_ && kernel_type_ == storage_ && IsFloat(storage_);
  }

  ConvPlan plan_;
  BufferSlice input_, kernel_, out_;
  PrimitiveType storage_, input_type_, kernel_type_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONV_THUNK_H_
