// The schedulers as pipeline passes.
//  - memory-scheduler: ScheduleModule (memory_scheduler.h) with an
//    algorithm ("auto" unless given); flattens the call graph first.
//  - latency-hiding-scheduler: ScheduleLatencyHiding (latency_hiding.h)
//    with the host's machine model and no memory limit; the module must be
//    scheduled.
// Both keep their last report for whoever runs them.
#ifndef UIR_SCHEDULE_PASSES_H_
#define UIR_SCHEDULE_PASSES_H_

#include "passes/pass.h"
#include "schedule/latency_hiding.h"
#include "schedule/memory_scheduler.h"

namespace uir::schedule {

class MemorySchedulerPass : public passes::HloPass {
 public:
  explicit MemorySchedulerPass(Algorithm algorithm = Algorithm::kAuto) : algorithm_(algorithm) {}
  std::string_view name() const override { return "memory-scheduler"; }
  bool Run(hlo::HloModule& module) override;
  const ScheduleReport& report() const { return report_; }

 private:
  Algorithm algorithm_;
  ScheduleReport report_;
};

class LatencyHidingSchedulerPass : public passes::HloPass {
 public:
  std::string_view name() const override { return "latency-hiding-scheduler"; }
  bool Run(hlo::HloModule& module) override;
  const LatencyHidingReport& report() const { return report_; }

 private:
  LatencyHidingReport report_;
};

}  // namespace uir::schedule

#endif  // UIR_SCHEDULE_PASSES_H_
