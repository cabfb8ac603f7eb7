// Reachability within one computation: whether an instruction depends on
// another through operands or control edges. One bit set per instruction
// (n^2 / 8 bytes), built in one pass over post order.
#ifndef UIR_ANALYSIS_REACHABILITY_H_
#define UIR_ANALYSIS_REACHABILITY_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/computation.h"

namespace uir::analysis {

class HloReachabilityMap {
 public:
  explicit HloReachabilityMap(const hlo::HloComputation& computation);

  // True if `a` == `b` or `a` depends on `b` (b reaches a).
  bool IsReachable(const hlo::HloInstruction* b, const hlo::HloInstruction* a) const;
  // Neither depends on the other.
  bool IsIndependent(const hlo::HloInstruction* a, const hlo::HloInstruction* b) const {
    return !IsReachable(a, b) && !IsReachable(b, a);
  }

 private:
  absl::flat_hash_map<const hlo::HloInstruction*, int64_t> index_;
  int64_t words_ = 0;
  std::vector<uint64_t> bits_;  // row i: the instructions i depends on, and i
};

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_REACHABILITY_H_
