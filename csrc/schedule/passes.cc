#include "schedule/passes.h"

namespace uir::schedule {

bool MemorySchedulerPass::Run(hlo::HloModule& module) {
  const uint64_t before = module.Fingerprint();
  report_ = ScheduleModule(module, algorithm_);
  return module.Fingerprint() != before;
}

bool LatencyHidingSchedulerPass::Run(hlo::HloModule& module) {
  if (!module.has_schedule()) return false;
  const uint64_t before = module.Fingerprint();
  report_ = ScheduleLatencyHiding(module, MachineModel::Host());
  return module.Fingerprint() != before;
}

}  // namespace uir::schedule
