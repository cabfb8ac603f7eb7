// A GEMM thunk: a (batched) matrix product on BLAS over three slices.
#ifndef UIR_RUNTIME_GEMM_THUNK_H_
#define UIR_RUNTIME_GEMM_THUNK_H_

#include <memory>
#include <string>

#include "runtime/gemm.h"
#include "runtime/thunk.h"

namespace uir::runtime {

class GemmThunk final : public Thunk {
 public:
  // Checks that each slice holds exactly the plan's operand or result
  // (batch * rows * columns elements).
  static std::unique_ptr<GemmThunk> Create(std::string name, const GemmPlan& plan,
                                           const BufferSlice& lhs, const BufferSlice& rhs,
                                           const BufferSlice& out);

  const GemmPlan& plan() const { return plan_; }
  void Execute(const ExecuteParams& params) const override;

 private:
  GemmThunk(std::string name, const GemmPlan& plan, const BufferSlice& lhs, const BufferSlice& rhs,
            const BufferSlice& out)
      : Thunk(Kind::kGemm, std::move(name),
              {BufferUse::Read(lhs), BufferUse::Read(rhs), BufferUse::Write(out)}),
        plan_(plan),
        lhs_(lhs),
        rhs_(rhs),
        out_(out) {}
  std::string Details() const override;

  GemmPlan plan_;
  BufferSlice lhs_, rhs_, out_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GEMM_THUNK_H_
