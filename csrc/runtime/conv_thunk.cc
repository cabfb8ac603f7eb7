// Convolution thunks: the plan checked against its slices once.
#include "runtime/conv_thunk.h"

#include <memory>

#include "hlo/float_format.h"
#include "runtime/narrow_float.h"
#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<ConvThunk> ConvThunk::Create(std::string name, const ConvPlan& plan,
                                             const BufferSlice& input, const BufferSlice& kernel,
                                             const BufferSlice& out, hlo::PrimitiveType storage) {
  CheckSlices(name, {input, kernel, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "convolution thunk " << name << ": " << invalid;
  const bool narrow = hlo::IsNarrowFloat(storage);
  UIR_CHECK(narrow ? !plan.f64
                   : storage == (plan.f64 ? hlo::PrimitiveType::kF64 : hlo::PrimitiveType::kF32))
      << "convolution thunk " << name << ": elements of " << hlo::PrimitiveTypeName(storage)
      << " for a " << (plan.f64 ? "f64" : "f32") << " plan";
  const int64_t e = hlo::StorageBytes(storage);
  UIR_CHECK(input.size >= plan.InputElements() * e && kernel.size >= plan.KernelElements() * e &&
            out.size >= plan.OutputElements() * e)
      << "convolution thunk " << name << ": slices of " << input.size << ", " << kernel.size
      << " and " << out.size << " bytes for " << plan.ToString();
  return std::unique_ptr<ConvThunk>(
      new ConvThunk(std::move(name), plan, input, kernel, out, storage));
}

void ConvThunk::Execute(const ExecuteParams& params) const {
  if (!hlo::IsNarrowFloat(storage_)) {
    RunConv(plan_, params.At(input_), params.At(kernel_), params.At(out_));
    return;
  }
  // The elements the plan's strides reach, widened as laid out.
  RunInF32(
      storage_, params.At(input_), plan_.InputElements(), params.At(kernel_),
      plan_.KernelElements(), params.At(out_), plan_.OutputElements(),
      [&](const float* in, const float* kernel, float* out) { RunConv(plan_, in, kernel, out); });
}

std::string ConvThunk::Details() const {
  std::string text = plan_.ToString();
  if (hlo::IsNarrowFloat(storage_)) {
    text.replace(0, 3, std::string(hlo::PrimitiveTypeName(storage_)) + " (in f32)");
  }
  return text;
}

}  // namespace uir::runtime
