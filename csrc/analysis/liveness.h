// Liveness under a schedule. The schedule is flattened into one timeline:
// each computation a span [start, end], each instruction a time; an
// instruction that runs computations (while, conditional, call,
// async-start) has an entry time before their spans and an exit time after
// them (a while consumes its initial state on entry and yields its result
// on exit). A value is live from its first position to its last use (a
// position nothing reads, such as a dead tuple holding it, does not keep it
// alive: a tuple only points at its elements); values at a computation's
// root live to the end of its span,
// the entry's results to the end of the program, and values of an async
// computation until the matching async-done, since the work may run
// concurrently until then. A buffer is live over the union of its values.
//
// Memory: buffers are entry parameters, constants, outputs (live-out) or
// temporaries. Temporaries go into the arena; a temporary defined by an op
// that may write over a dying operand of the same size (in_place.h) joins
// that operand's group and takes its bytes. The peak is the most bytes of
// temporary groups live at one time.
#ifndef UIR_ANALYSIS_LIVENESS_H_
#define UIR_ANALYSIS_LIVENESS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/alias.h"

namespace uir::analysis {

// The order of each sequential computation.
using Sequences =
    absl::flat_hash_map<const hlo::HloComputation*, std::vector<hlo::HloInstruction*>>;
// The module's schedule (post order for computations it lacks).
Sequences SequencesOf(const hlo::HloModule& module);

struct LiveRange {
  int64_t start = 0;
  int64_t end = 0;  // inclusive
  bool Overlaps(const LiveRange& o) const { return start <= o.end && o.start <= end; }
};

class HloLiveRange {
 public:
  static std::unique_ptr<HloLiveRange> Run(const HloAliasAnalysis& alias,
                                           const Sequences& sequences);

  const HloAliasAnalysis& alias() const { return alias_; }
  int64_t time_in(const hlo::HloInstruction* i) const { return times_.at(i).first; }
  int64_t time_out(const hlo::HloInstruction* i) const { return times_.at(i).second; }
  const LiveRange& span(const hlo::HloComputation* c) const { return spans_.at(c); }
  const LiveRange& value_range(const HloValue& v) const { return value_ranges_[v.id()]; }
  const LiveRange& buffer_range(const HloBuffer& b) const { return buffer_ranges_[b.id()]; }
  int64_t end_time() const { return end_time_; }
  // The instruction running at each time (nullptr at span ends and at the
  // entry times of instructions that run computations).
  const std::vector<const hlo::HloInstruction*>& timeline() const { return timeline_; }

 private:
  explicit HloLiveRange(const HloAliasAnalysis& alias) : alias_(alias) {}
  void Flatten(const hlo::HloComputation* c, const Sequences& sequences);

  const HloAliasAnalysis& alias_;
  absl::flat_hash_map<const hlo::HloInstruction*, std::pair<int64_t, int64_t>> times_;
  absl::flat_hash_map<const hlo::HloComputation*, LiveRange> spans_;
  std::vector<LiveRange> value_ranges_;
  std::vector<LiveRange> buffer_ranges_;
  std::vector<const hlo::HloInstruction*> timeline_;
  int64_t end_time_ = 0;
};

// The start of an async pair (async-start, copy-start, all-reduce-start,
// all-gather-start, collective-permute-start) and its done.
bool IsAsyncStart(hlo::HloOpcode opcode);
bool IsAsyncDone(hlo::HloOpcode opcode);
// The done that finishes `start` (through async-updates), or nullptr when
// `start` is no async start or has none.
const hlo::HloInstruction* AsyncDoneOf(const hlo::HloInstruction& start);

enum class BufferKind { kParameter, kConstant, kOutput, kTemporary };
std::string_view BufferKindName(BufferKind kind);
// A buffer holding an entry parameter's value is kParameter (also when an
// output aliases it), else one holding a constant kConstant, else a
// live-out one kOutput.
BufferKind KindOf(const HloBuffer& buffer);

// Temporaries that share bytes: the first is the group's owner; the others
// each write over the previous one in place as it dies.
struct TemporaryGroup {
  std::vector<const HloBuffer*> buffers;
  int64_t bytes = 0;
  LiveRange range;
};
std::vector<TemporaryGroup> GroupTemporaries(const HloLiveRange& liveness);

struct MemoryPeak {
  int64_t bytes = 0;
  int64_t time = 0;  // the first time the peak is reached
};
MemoryPeak PeakOf(const std::vector<TemporaryGroup>& groups);

// The peak temporary bytes of the module under `sequences`.
MemoryPeak SimulatePeak(const HloAliasAnalysis& alias, const Sequences& sequences);

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_LIVENESS_H_
