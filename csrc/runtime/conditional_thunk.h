// A conditional thunk: the branch sequence a selector picks.
#ifndef UIR_RUNTIME_CONDITIONAL_THUNK_H_
#define UIR_RUNTIME_CONDITIONAL_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"
#include "runtime/thunk_executor.h"

namespace uir::runtime {

class ConditionalThunk final : public Thunk {
 public:
  // `selector`: a pred (1 byte: nonzero picks branch 0, zero branch 1; two
  // branches) or an s32 (4 bytes: branch i; out of range picks the last,
  // as XLA does).
  static std::unique_ptr<ConditionalThunk> Create(std::string name, const BufferSlice& selector,
                                                  std::vector<ThunkExecutor> branches);

  void Execute(const ExecuteParams& params) const override;
  std::vector<const ThunkExecutor*> nested() const override;

 private:
  ConditionalThunk(std::string name, std::vector<BufferUse> uses, const BufferSlice& selector,
                   std::vector<ThunkExecutor> branches)
      : Thunk(Kind::kConditional, std::move(name), std::move(uses)),
        selector_(selector),
        branches_(std::move(branches)) {}
  std::string Details() const override { return "selector " + selector_.ToString(); }

  BufferSlice selector_;
  std::vector<ThunkExecutor> branches_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CONDITIONAL_THUNK_H_
