// A GEMM thunk: a (batched) matrix product on BLAS over three slices.
#ifndef UIR_RUNTIME_GEMM_THUNK_H_
#define UIR_RUNTIME_GEMM_THUNK_H_

#include <memory>
#include <string>

#include "runtime/gemm.h"
#include "runtime/thunk.h"
#include "support/primitive_type.h"

namespace uir::runtime {

class GemmThunk final : public Thunk {
 public:
  // Checks that each slice holds exactly the plan's operand or result
  // (batch * rows * columns elements of `storage`). `storage` is f32 or f64
  // (as plan.f64 says), or a narrow float (bf16, f16, f8; plan.f64 false):
  // then the operands are widened to f32, multiplied there, and the result
  // rounded back once.
  static std::unique_ptr<GemmThunk> Create(std::string name, const GemmPlan& plan,
                                           const BufferSlice& lhs, const BufferSlice& rhs,
                                           const BufferSlice& out,
                                           PrimitiveType storage = PrimitiveType::kF32);

  const GemmPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  GemmThunk(std::string name, const GemmPlan& plan, const BufferSlice& lhs, const BufferSlice& rhs,
            const BufferSlice& out, PrimitiveType storage)
      : Thunk(Kind::kGemm, std::move(name),
              {BufferUse::Read(lhs), BufferUse::Read(rhs), BufferUse::Write(out)}),
        plan_(plan),
        lhs_(lhs),
        rhs_(rhs),
        out_(out),
        storage_(storage) {}
  std::string Details() const override;

  GemmPlan plan_;
  BufferSlice lhs_, rhs_, out_;
  PrimitiveType storage_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GEMM_THUNK_H_
