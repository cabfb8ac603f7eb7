#include "schedule/latency_hiding.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "analysis/liveness.h"
#include "analysis/shape_index.h"
#include "hlo/computation.h"
#include "passes/fusion/fusion_analysis.h"
#include "support/error.h"

namespace uir::schedule {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

double Bandwidth(const MachineModel& m) {
  return m.dram_bytes_per_s * static_cast<double>(std::max<int64_t>(1, m.cores));
}

}  // namespace

double EstimateSeconds(const HloInstruction& i, const MachineModel& m) {
  switch (i.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kDomain:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
      return 0;
    default:
      if (analysis::IsAsyncStart(i.opcode()) || analysis::IsAsyncDone(i.opcode())) return 0;
      return passes::fusion::FusionSummary::Of(i).Seconds(m);
  }
}

double AsyncLatency(const HloInstruction& start, const MachineModel& m) {
  switch (start.opcode()) {
    case HloOpcode::kAsyncStart: {
      const HloComputation* c = start.async_wrapped_computation();
      if (c == nullptr) return 0;
      double s = 0;
      for (const HloInstruction* i : c->instructions()) s += EstimateSeconds(*i, m);
      return s;
    }
    case HloOpcode::kCopyStart:
      return 2.0 * static_cast<double>(analysis::ByteSize(start.operand(0)->shape())) /
                 Bandwidth(m) +
             m.kernel_overhead_s;
    default: {
      if (!analysis::IsAsyncStart(start.opcode())) return 0;
      double bytes = 0;
      for (const HloInstruction* o : start.operands())
        bytes += static_cast<double>(analysis::ByteSize(o->shape()));
      return 2.0 * bytes / Bandwidth(m) + m.kernel_overhead_s;
    }
  }
}

double LatencyHidingReport::overlap_before_s() const {
  double s = 0;
  for (const AsyncPairReport& p : pairs) s += p.overlap_before_s;
  return s;
}
double LatencyHidingReport::overlap_after_s() const {
  double s = 0;
  for (const AsyncPairReport& p : pairs) s += p.overlap_after_s;
  return s;
}
double LatencyHidingReport::latency_s() const {
  double s = 0;
  for (const AsyncPairReport& p : pairs) s += p.latency_s;
  return s;
}

std::string LatencyHidingReport::ToString() const {
  std::ostringstream os;
  os << std::setprecision(3);
  os << "latency hiding: " << pairs.size() << " async pairs, estimated overlap "
     << overlap_before_s() * 1e6 << " us -> " << overlap_after_s() * 1e6 << " us of "
     << latency_s() * 1e6 << " us latency; peak " << peak_before << " -> " << peak_after
     << " bytes";
  if (memory_limit >= 0) os << " (limit " << memory_limit << ")";
  os << "\n";
  for (const AsyncPairReport& p : pairs) {
    os << "  %" << p.start << " .. %" << p.done << ": latency " << p.latency_s * 1e6
       << " us, overlap " << p.overlap_before_s * 1e6 << " -> " << p.overlap_after_s * 1e6
       << " us, " << p.instructions_between_before << " -> " << p.instructions_between_after
       << " instructions between\n";
  }
  return os.str();
}

namespace {

int64_t Position(const std::vector<HloInstruction*>& seq, const HloInstruction* i) {
  return std::find(seq.begin(), seq.end(), i) - seq.begin();
}

// Compute time between `start` and `done` in `seq`, at most `latency`.
std::pair<double, int64_t> Overlap(const std::vector<HloInstruction*>& seq,
                                   const HloInstruction* start, const HloInstruction* done,
                                   double latency, const MachineModel& m) {
  const int64_t a = Position(seq, start);
  const int64_t b = Position(seq, done);
  double s = 0;
  for (int64_t k = a + 1; k < b; ++k) s += EstimateSeconds(*seq[k], m);
  return {std::min(s, latency), std::max<int64_t>(0, b - a - 1)};
}

void Move(std::vector<HloInstruction*>& seq, HloInstruction* i, int64_t to) {
  const int64_t from = Position(seq, i);
  seq.erase(seq.begin() + from);
  seq.insert(seq.begin() + to, i);
}

}  // namespace

LatencyHidingReport ScheduleLatencyHiding(hlo::HloModule& module, const MachineModel& machine,
                                          int64_t memory_limit) {
  UIR_CHECK(module.has_schedule()) << "latency hiding needs a scheduled module";
  LatencyHidingReport report;
  report.memory_limit = memory_limit;
  const auto alias = analysis::HloAliasAnalysis::Run(module);
  analysis::Sequences sequences = analysis::SequencesOf(module);
  auto peak = [&]() { return analysis::SimulatePeak(*alias, sequences).bytes; };
  report.peak_before = peak();
  const int64_t limit =
      memory_limit < 0 ? INT64_MAX : std::max<int64_t>(memory_limit, report.peak_before);

  for (const HloComputation* c : alias->dataflow().computations()) {
    std::vector<HloInstruction*>& seq = sequences[c];
    std::vector<std::pair<HloInstruction*, HloInstruction*>> pairs;
    for (HloInstruction* i : seq) {
      const HloInstruction* done = analysis::AsyncDoneOf(*i);
      if (done != nullptr && done->parent() == c)
        pairs.emplace_back(i, const_cast<HloInstruction*>(done));
    }
    for (auto& [start, done] : pairs) {
      AsyncPairReport r;
      r.start = start->name();
      r.done = done->name();
      r.latency_s = AsyncLatency(*start, machine);
      std::tie(r.overlap_before_s, r.instructions_between_before) =
          Overlap(seq, start, done, r.latency_s, machine);
      const std::vector<HloInstruction*> before = seq;
      // The done, as late as its first user (or the end).
      int64_t first_user = static_cast<int64_t>(seq.size());
      for (const HloInstruction* u : done->users())
        first_user = std::min(first_user, Position(seq, u));
      for (const HloInstruction* u : done->control_successors())
        first_user = std::min(first_user, Position(seq, u));
      if (done == c->root()) first_user = static_cast<int64_t>(seq.size());
      Move(seq, done, first_user - 1);
      // The start, as early as its operands (and control predecessors) allow.
      const std::vector<HloInstruction*> done_moved = seq;
      int64_t earliest = 0;
      for (const HloInstruction* o : start->operands())
        earliest = std::max(earliest, Position(seq, o) + 1);
      for (const HloInstruction* p : start->control_predecessors())
        earliest = std::max(earliest, Position(seq, p) + 1);
      const int64_t original = Position(seq, start);
      if (earliest < original) Move(seq, start, earliest);
      if (peak() > limit) {
        // Later starts keep the async result live for less time: the
        // earliest start position that still fits, by bisection.
        int64_t lo = earliest + 1, hi = original;
        seq = done_moved;
        while (lo < hi) {
          const int64_t mid = (lo + hi) / 2;
          seq = done_moved;
          Move(seq, start, mid);
          if (peak() <= limit) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        seq = done_moved;
        Move(seq, start, lo);
        if (peak() > limit) seq = before;
      }
      std::tie(r.overlap_after_s, r.instructions_between_after) =
          Overlap(seq, start, done, r.latency_s, machine);
      report.pairs.push_back(std::move(r));
    }
  }
  hlo::HloSchedule schedule = module.schedule();
  for (const auto& [c, seq] : sequences) schedule.set_sequence(*c, seq);
  module.set_schedule(std::move(schedule));
  report.peak_after = peak();
  return report;
}

}  // namespace uir::schedule
