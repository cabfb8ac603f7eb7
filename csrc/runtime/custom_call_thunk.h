// A custom-call thunk: a registered target called on a frame over the
// run's memory.
#ifndef UIR_RUNTIME_CUSTOM_CALL_THUNK_H_
#define UIR_RUNTIME_CUSTOM_CALL_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"
#include "support/custom_call.h"

namespace uir::runtime {

class CustomCallThunk final : public Thunk {
 public:
  // `frame`: the call with its buffers' data left null; `operands` and
  // `results` are the slices of its array leaves, depth first (operands in
  // order, then the result's). Checks the counts and each slice's size
  // against its leaf's. The target is looked up on each call, so one
  // registered later (or replaced) is the one that runs.
  static std::unique_ptr<CustomCallThunk> Create(std::string name, CallFrame frame,
                                                 std::vector<BufferSlice> operands,
                                                 std::vector<BufferSlice> results);

  // Fills a copy of the frame with this run's addresses and calls the
  // target; throws CustomCallError when it fails.
  void Execute(const ExecuteParams& params) const override;

 private:
  CustomCallThunk(std::string name, std::vector<BufferUse> uses, CallFrame frame,
                  std::vector<BufferSlice> leaves)
      : Thunk(Kind::kCustomCall, std::move(name), std::move(uses), /*ordered=*/true),
        frame_(std::move(frame)),
        leaves_(std::move(leaves)) {}
  std::string Details() const override { return "\"" + frame_.target + "\""; }

  CallFrame frame_;
  std::vector<BufferSlice> leaves_;  // operand leaves, then result leaves
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CUSTOM_CALL_THUNK_H_
