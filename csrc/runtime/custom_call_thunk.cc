// Custom-call thunks: the frame's leaves pointed at the run's slices.
#include "runtime/custom_call_thunk.h"

#include "support/error.h"

namespace uir::runtime {
namespace {

// Visits the array leaves of `b` depth first.
template <typename Fn>
void ForEachLeaf(CallBuffer& b, Fn&& fn) {
  if (b.IsTuple()) {
    for (CallBuffer& e : b.elements) ForEachLeaf(e, fn);
  } else if (b.IsArray()) {
    fn(b);
  }
}

}  // namespace

std::unique_ptr<CustomCallThunk> CustomCallThunk::Create(std::string name, CallFrame frame,
                                                         std::vector<BufferSlice> operands,
                                                         std::vector<BufferSlice> results) {
  CheckSlices(name, operands);
  CheckSlices(name, results);
  std::vector<BufferSlice> leaves = operands;
  leaves.insert(leaves.end(), results.begin(), results.end());
  size_t next = 0;
  auto check = [&](CallBuffer& leaf) {
    UIR_CHECK(next < leaves.size()) << "custom-call thunk " << name << ": more array leaves than "
                                    << leaves.size() << " slices";
    UIR_CHECK(leaves[next].size == leaf.Bytes())
        << "custom-call thunk " << name << ": a slice of " << leaves[next].size << " bytes for "
        << leaf.ToString();
    ++next;
  };
  for (CallBuffer& o : frame.operands) ForEachLeaf(o, check);
  UIR_CHECK(next == operands.size()) << "custom-call thunk " << name << ": " << operands.size()
                                     << " operand slices for " << next << " operand leaves";
  ForEachLeaf(frame.result, check);
  UIR_CHECK(next == leaves.size()) << "custom-call thunk " << name << ": " << leaves.size()
                                   << " slices for " << next << " array leaves";
  std::vector<BufferUse> uses;
  for (const BufferSlice& s : operands) uses.push_back(BufferUse::Read(s));
  for (const BufferSlice& s : results) uses.push_back(BufferUse::Write(s));
  return std::unique_ptr<CustomCallThunk>(
      new CustomCallThunk(std::move(name), std::move(uses), std::move(frame), std::move(leaves)));
}

void CustomCallThunk::Execute(const ExecuteParams& params) const {
  CallFrame frame = frame_;
  size_t next = 0;
  auto place = [&](CallBuffer& leaf) { leaf.data = params.At(leaves_[next++]); };
  for (CallBuffer& o : frame.operands) ForEachLeaf(o, place);
  ForEachLeaf(frame.result, place);
  RunCustomCall(frame);
}

}  // namespace uir::runtime
