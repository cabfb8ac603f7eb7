#include "runtime/profiler.h"

namespace uir::runtime {

void Profiler::Record(const ProfileEvent& event) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(event);
}

std::vector<ProfileEvent> Profiler::Events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

}  // namespace uir::runtime
