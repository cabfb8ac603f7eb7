// Memory schedulers: an order for every sequential computation that keeps
// the peak of live temporary bytes low.
//
//  - list: greedy; of the instructions whose operands are done, runs the one
//    that frees the most bytes net of what it defines (ties: post order).
//  - dfs: depth first from the root, visiting first the operand whose
//    subgraph defines the most bytes and has the most extra users, so big
//    subgraphs finish (and free) before their siblings start.
//  - postorder: the computation's post order.
//  - auto: all three, keeping the one whose simulated peak (liveness.h) is
//    lowest, as XLA's default memory scheduler does.
//
// ScheduleModule flattens the call graph first, then sets the module's
// schedule (is_scheduled=true). Fused and applied computations keep their
// post order.
#ifndef UIR_SCHEDULE_MEMORY_SCHEDULER_H_
#define UIR_SCHEDULE_MEMORY_SCHEDULER_H_

#include <string>
#include <utility>
#include <vector>

#include "analysis/liveness.h"

namespace uir::schedule {

enum class Algorithm { kList, kDfs, kPostOrder, kAuto };
// "list", "dfs", "postorder", "auto"; ValueError (std::invalid_argument) otherwise.
Algorithm AlgorithmByName(const std::string& name);
std::string_view AlgorithmName(Algorithm algorithm);

analysis::Sequences ListSchedule(const analysis::HloAliasAnalysis& alias);
analysis::Sequences DfsSchedule(const analysis::HloAliasAnalysis& alias);
analysis::Sequences PostOrderSchedule(const analysis::HloAliasAnalysis& alias);

struct ScheduleReport {
  std::string chosen;
  // (algorithm, simulated peak temporary bytes), in the order they ran.
  std::vector<std::pair<std::string, int64_t>> peaks;
  double seconds = 0;
  std::string ToString() const;
};

ScheduleReport ScheduleModule(hlo::HloModule& module, Algorithm algorithm);

// Installs `sequences` (post order for computations they lack) as the
// module's schedule and marks it is_scheduled.
void SetSchedule(hlo::HloModule& module, const analysis::Sequences& sequences);

}  // namespace uir::schedule

#endif  // UIR_SCHEDULE_MEMORY_SCHEDULER_H_
