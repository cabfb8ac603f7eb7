// A call thunk: a called computation's sequence, on the caller's memory.
#ifndef UIR_RUNTIME_CALL_THUNK_H_
#define UIR_RUNTIME_CALL_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"
#include "runtime/thunk_executor.h"

namespace uir::runtime {

class CallThunk final : public Thunk {
 public:
  static std::unique_ptr<CallThunk> Create(std::string name, ThunkExecutor callee);

  void Execute(const ExecuteParams& params) const override { callee_.Execute(params); }
  std::vector<const ThunkExecutor*> nested() const override { return {&callee_}; }

 private:
  CallThunk(std::string name, std::vector<BufferUse> uses, ThunkExecutor callee)
      : Thunk(Kind::kCall, std::move(name), std::move(uses)), callee_(std::move(callee)) {}

  ThunkExecutor callee_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CALL_THUNK_H_
