// Convolution thunks: the plan checked against its slices once.
#include "runtime/conv_thunk.h"

#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<ConvThunk> ConvThunk::Create(std::string name, const ConvPlan& plan,
                                             const BufferSlice& input, const BufferSlice& kernel,
                                             const BufferSlice& out) {
  CheckSlices(name, {input, kernel, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "convolution thunk " << name << ": " << invalid;
  const int64_t e = plan.ElementBytes();
  UIR_CHECK(input.size >= plan.InputElements() * e && kernel.size >= plan.KernelElements() * e &&
            out.size >= plan.OutputElements() * e)
      << "convolution thunk " << name << ": slices of " << input.size << ", " << kernel.size
      << " and " << out.size << " bytes for " << plan.ToString();
  return std::unique_ptr<ConvThunk>(new ConvThunk(std::move(name), plan, input, kernel, out));
}

void ConvThunk::Execute(const ExecuteParams& params) const {
  RunConv(plan_, params.At(input_), params.At(kernel_), params.At(out_));
}

}  // namespace uir::runtime
