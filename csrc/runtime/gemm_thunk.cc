// GEMM thunks: the plan checked against its slices once, run on BLAS.
#include "runtime/gemm_thunk.h"

#include <memory>

#include "runtime/narrow_float.h"
#include "support/error.h"
#include "support/float_format.h"

namespace uir::runtime {

std::unique_ptr<GemmThunk> GemmThunk::Create(std::string name, const GemmPlan& plan,
                                             const BufferSlice& lhs, const BufferSlice& rhs,
                                             const BufferSlice& out, PrimitiveType storage) {
  CheckSlices(name, {lhs, rhs, out});
  UIR_CHECK(plan.batch >= 1 && plan.m >= 1 && plan.n >= 1 && plan.k >= 1)
      << "gemm thunk " << name << ": empty plan";
  const bool narrow = IsNarrowFloat(storage);
  UIR_CHECK(narrow ? !plan.f64 : storage == (plan.f64 ? PrimitiveType::kF64 : PrimitiveType::kF32))
      << "gemm thunk " << name << ": elements of " << PrimitiveTypeName(storage) << " for a "
      << (plan.f64 ? "f64" : "f32") << " plan";
  const int64_t e = StorageBytes(storage);
  const bool packed = plan.lda == 0 && plan.ldb == 0 && plan.ldc == 0;
  UIR_CHECK(packed || !narrow) << "gemm thunk " << name << ": narrow floats need packed operands";
  if (packed) {
    UIR_CHECK(lhs.size == plan.batch * plan.m * plan.k * e &&
              rhs.size == plan.batch * plan.k * plan.n * e &&
              out.size == plan.batch * plan.m * plan.n * e)
        << "gemm thunk " << name << ": slices of " << lhs.size << ", " << rhs.size << " and "
        << out.size << " bytes for a " << plan.batch << "x" << plan.m << "x" << plan.n << "x"
        << plan.k << " product";
  }
  return std::unique_ptr<GemmThunk>(new GemmThunk(std::move(name), plan, lhs, rhs, out, storage));
}

void GemmThunk::Execute(const ExecuteParams& params) const {
  if (!IsNarrowFloat(storage_)) {
    RunGemm(plan_, params.At(lhs_), params.At(rhs_), params.At(out_));
    return;
  }
  const int64_t e = StorageBytes(storage_);
  RunInF32(storage_, params.At(lhs_), lhs_.size / e, params.At(rhs_), rhs_.size / e,
           params.At(out_), out_.size / e,
           [&](const float* a, const float* b, float* c) { RunGemm(plan_, a, b, c); });
}

std::string GemmThunk::Details() const {
  std::string out =
      std::string(PrimitiveTypeName(storage_)) + (IsNarrowFloat(storage_) ? " (in f32) " : " ");
  if (plan_.batch > 1) out += std::to_string(plan_.batch) + "x";
  out += "[" + std::to_string(plan_.m) + "x" + std::to_string(plan_.k) + "]" +
         (plan_.trans_a ? "^T" : "") + " * [" + std::to_string(plan_.k) + "x" +
         std::to_string(plan_.n) + "]" + (plan_.trans_b ? "^T" : "");
  return out;
}

}  // namespace uir::runtime
