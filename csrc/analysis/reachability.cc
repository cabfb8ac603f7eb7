#include "analysis/reachability.h"

#include "support/error.h"

namespace uir::analysis {

HloReachabilityMap::HloReachabilityMap(const hlo::HloComputation& c) {
  const std::vector<hlo::HloInstruction*> order = c.MakeInstructionPostOrder();
  const auto n = static_cast<int64_t>(order.size());
  words_ = (n + 63) / 64;
  bits_.assign(static_cast<size_t>(n * words_), 0);
  for (int64_t i = 0; i < n; ++i) index_[order[i]] = i;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t* row = &bits_[i * words_];
    row[i / 64] |= uint64_t{1} << (i % 64);
    auto merge = [&](const hlo::HloInstruction* x) {
      const uint64_t* other = &bits_[index_.at(x) * words_];
      for (int64_t w = 0; w < words_; ++w) row[w] |= other[w];
    };
    for (const hlo::HloInstruction* o : order[i]->operands()) merge(o);
    for (const hlo::HloInstruction* p : order[i]->control_predecessors()) merge(p);
  }
}

bool HloReachabilityMap::IsReachable(const hlo::HloInstruction* b,
                                     const hlo::HloInstruction* a) const {
  auto ia = index_.find(a);
  auto ib = index_.find(b);
  UIR_CHECK(ia != index_.end() && ib != index_.end()) << "instruction not in the computation";
  return (bits_[ia->second * words_ + ib->second / 64] >> (ib->second % 64)) & 1;
}

}  // namespace uir::analysis
