// Convolution thunks: the plan checked against its slices once.
#include "runtime/conv_thunk.h"

#include <algorithm>
#include <memory>
#include <type_traits>

#include "runtime/conv_generic.h"
#include "runtime/narrow_float.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::runtime {

std::unique_ptr<ConvThunk> ConvThunk::Create(std::string name, const ConvPlan& plan,
                                             const BufferSlice& input, const BufferSlice& kernel,
                                             const BufferSlice& out, PrimitiveType storage,
                                             std::optional<PrimitiveType> input_type,
                                             std::optional<PrimitiveType> kernel_type) {
  CheckSlices(name, {input, kernel, out});
  const std::string invalid = plan.Invalid();
  UIR_CHECK(invalid.empty()) << "convolution thunk " << name << ": " << invalid;
  const PrimitiveType it = input_type.value_or(storage), kt = kernel_type.value_or(storage);
  if (it == storage && kt == storage && IsFloat(storage)) {
    const bool narrow = IsNarrowFloat(storage);
    UIR_CHECK(narrow ? !plan.f64
                     : storage == (plan.f64 ? PrimitiveType::kF64 : PrimitiveType::kF32))
        << "convolution thunk " << name << ": elements of " << PrimitiveTypeName(storage)
        << " for a " << (plan.f64 ? "f64" : "f32") << " plan";
  } else {
    UIR_CHECK(ConvTypesSupported(it, kt, storage))
        << "convolution thunk " << name << ": operands of " << PrimitiveTypeName(it) << " and "
        << PrimitiveTypeName(kt) << " for a result of " << PrimitiveTypeName(storage);
  }
  UIR_CHECK(input.size >= plan.InputElements() * StorageBytes(it) &&
            kernel.size >= plan.KernelElements() * StorageBytes(kt) &&
            out.size >= plan.OutputElements() * StorageBytes(storage))
      << "convolution thunk " << name << ": slices of " << input.size << ", " << kernel.size
      << " and " << out.size << " bytes for " << plan.ToString();
  return std::unique_ptr<ConvThunk>(
      new ConvThunk(std::move(name), plan, input, kernel, out, storage, it, kt));
}

namespace {

bool IsRealFloat(PrimitiveType t) { return IsFloat(t); }

// `count` elements of float type `type` as T (f32 or f64), exactly.
template <typename T>
std::unique_ptr<T[]> WidenFloats(PrimitiveType type, const void* src, int64_t count) {
  std::unique_ptr<T[]> out(new T[static_cast<size_t>(std::max<int64_t>(count, 1))]);
  if (type == PrimitiveType::kF64) {
    const auto* d = static_cast<const double*>(src);
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(d[i]);
  } else if (type == PrimitiveType::kF32) {
    const auto* f = static_cast<const float*>(src);
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(f[i]);
  } else if constexpr (std::is_same_v<T, float>) {
    WidenToF32(type, src, count, out.get());
  } else {
    std::unique_ptr<float[]> wide(new float[static_cast<size_t>(std::max<int64_t>(count, 1))]);
    WidenToF32(type, src, count, wide.get());
    for (int64_t i = 0; i < count; ++i) out[i] = wide[i];
  }
  return out;
}

}  // namespace

void ConvThunk::Execute(const ExecuteParams& params) const {
  if (!Uniform()) {
    if (IsRealFloat(input_type_) && IsRealFloat(kernel_type_) && IsRealFloat(storage_)) {
      // Float operands of other types: widened to the plan's precision
      // for BLAS, the result rounded once.
      auto run = [&]<typename T>(T*) {
        const auto in = WidenFloats<T>(input_type_, params.At(input_), plan_.InputElements());
        const auto k = WidenFloats<T>(kernel_type_, params.At(kernel_), plan_.KernelElements());
        if (storage_ == PrimitiveType::kF32 || storage_ == PrimitiveType::kF64) {
          RunConv(plan_, in.get(), k.get(), params.At(out_));
          return;
        }
        const int64_t n = plan_.OutputElements();
        std::unique_ptr<float[]> result(new float[static_cast<size_t>(std::max<int64_t>(n, 1))]);
        RunConv(plan_, in.get(), k.get(), result.get());
        NarrowFromF32(storage_, result.get(), n, params.At(out_));
      };
      if (plan_.f64) {
        run(static_cast<double*>(nullptr));
      } else {
        run(static_cast<float*>(nullptr));
      }
      return;
    }
    RunConvGeneric(plan_, input_type_, kernel_type_, storage_, params.At(input_),
                   params.At(kernel_), params.At(out_));
    return;
  }
  if (!IsNarrowFloat(storage_)) {
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
  if (!Uniform()) {
    const bool floats = IsRealFloat(input_type_) && IsRealFloat(kernel_type_);
    text.replace(0, 3,
                 std::string(PrimitiveTypeName(input_type_)) + " x " +
                     std::string(PrimitiveTypeName(kernel_type_)) + " -> " +
                     std::string(PrimitiveTypeName(storage_)) +
                     (floats ? (plan_.f64 ? " (in f64)" : " (in f32)") : " (direct)"));
  } else if (IsNarrowFloat(storage_)) {
    text.replace(0, 3, std::string(PrimitiveTypeName(storage_)) + " (in f32)");
  }
  return text;
}

}  // namespace uir::runtime
