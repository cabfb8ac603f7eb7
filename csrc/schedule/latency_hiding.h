// Latency-hiding scheduler: reorders a scheduled module so that async work
// overlaps independent compute. Each async pair (async-start/-done,
// copy-start/-done, all-reduce-, all-gather- and collective-permute-start/
// -done; async custom calls are async-start wrapping a custom-call) gets
// its start moved as early as its operands allow and its done as late as
// its users allow. The async result is live from start to done, so a move
// that takes the simulated peak of temporaries above `memory_limit_bytes`
// is shortened (the start stays later) until it fits, or dropped.
//
// Cost model (support/machine.h's MachineModel): an instruction's time is
// its roofline estimate (bytes over bandwidth, flops over peak, plus the
// launch overhead); an async op's latency is that of the work it wraps
// (for a copy, its bytes read and written; for a collective, its bytes
// moved at memory bandwidth). The overlap of a pair is the compute time
// scheduled between its start and done, at most its latency.
#ifndef UIR_SCHEDULE_LATENCY_HIDING_H_
#define UIR_SCHEDULE_LATENCY_HIDING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/module.h"
#include "support/machine.h"

namespace uir::schedule {

struct AsyncPairReport {
  std::string start;
  std::string done;
  double latency_s = 0;
  double overlap_before_s = 0;
  double overlap_after_s = 0;
  int64_t instructions_between_before = 0;
  int64_t instructions_between_after = 0;
};

struct LatencyHidingReport {
  std::vector<AsyncPairReport> pairs;
  int64_t peak_before = 0;
  int64_t peak_after = 0;
  int64_t memory_limit = -1;  // -1: none
  double overlap_before_s() const;
  double overlap_after_s() const;
  double latency_s() const;
  std::string ToString() const;
};

// The instruction's estimated run time.
double EstimateSeconds(const hlo::HloInstruction& instruction, const MachineModel& machine);
// The async latency of a start instruction (0 for anything else).
double AsyncLatency(const hlo::HloInstruction& start, const MachineModel& machine);

// The module must be scheduled. `memory_limit_bytes` < 0: no limit.
LatencyHidingReport ScheduleLatencyHiding(hlo::HloModule& module, const MachineModel& machine,
                                          int64_t memory_limit_bytes = -1);

}  // namespace uir::schedule

#endif  // UIR_SCHEDULE_LATENCY_HIDING_H_
