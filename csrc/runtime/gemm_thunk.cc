// GEMM thunks: the plan checked against its slices once, run on BLAS.
#include "runtime/gemm_thunk.h"

#include "support/error.h"

namespace uir::runtime {

std::unique_ptr<GemmThunk> GemmThunk::Create(std::string name, const GemmPlan& plan,
                                             const BufferSlice& lhs, const BufferSlice& rhs,
                                             const BufferSlice& out) {
  CheckSlices(name, {lhs, rhs, out});
  UIR_CHECK(plan.batch >= 1 && plan.m >= 1 && plan.n >= 1 && plan.k >= 1)
      << "gemm thunk " << name << ": empty plan";
  const int64_t e = plan.f64 ? 8 : 4;
  const int64_t packed = plan.lda == 0 && plan.ldb == 0 && plan.ldc == 0;
  if (packed) {
    UIR_CHECK(lhs.size == plan.batch * plan.m * plan.k * e &&
              rhs.size == plan.batch * plan.k * plan.n * e &&
              out.size == plan.batch * plan.m * plan.n * e)
        << "gemm thunk " << name << ": slices of " << lhs.size << ", " << rhs.size << " and "
        << out.size << " bytes for a " << plan.batch << "x" << plan.m << "x" << plan.n << "x"
        << plan.k << " product";
  }
  return std::unique_ptr<GemmThunk>(new GemmThunk(std::move(name), plan, lhs, rhs, out));
}

void GemmThunk::Execute(const ExecuteParams& params) const {
  RunGemm(plan_, params.At(lhs_), params.At(rhs_), params.At(out_));
}

std::string GemmThunk::Details() const {
  std::string out = plan_.f64 ? "f64 " : "f32 ";
  if (plan_.batch > 1) out += std::to_string(plan_.batch) + "x";
  out += "[" + std::to_string(plan_.m) + "x" + std::to_string(plan_.k) + "]" +
         (plan_.trans_a ? "^T" : "") + " * [" + std::to_string(plan_.k) + "x" +
         std::to_string(plan_.n) + "]" + (plan_.trans_b ? "^T" : "");
  return out;
}

}  // namespace uir::runtime
