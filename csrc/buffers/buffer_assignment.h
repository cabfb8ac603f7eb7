// Buffer assignment: where every HloBuffer of a scheduled module lives.
//
// Allocations, as XLA makes them: one per entry parameter buffer (the
// caller's array; an output aliased to it by input_output_alias lives
// there too), one per constant, one per output (live-out) buffer, and one
// arena for every temporary. The heap simulator places the temporaries'
// groups (liveness.h: a result written over its dying operand shares its
// bytes) in the arena at 64-byte aligned offsets.
//
// Check() proves the result safe without trusting the placement: every
// value has a slice that holds it, aligned and inside its allocation; no
// two values whose bytes overlap are live at the same time, except a
// result written in place over its operand at the operand's last use
// (identical slices, an op in_place.h allows); and values of one buffer
// follow each other in time (only phis, which stand for their inputs, are
// exempt).
#ifndef UIR_BUFFERS_BUFFER_ASSIGNMENT_H_
#define UIR_BUFFERS_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "analysis/liveness.h"

namespace uir::buffers {

inline constexpr int64_t kAlignment = 64;

struct Slice {
  int64_t allocation = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

struct Allocation {
  int64_t index = 0;
  analysis::BufferKind kind = analysis::BufferKind::kTemporary;
  int64_t size = 0;
  int64_t parameter_number = -1;  // kParameter
  analysis::ShapeIndex parameter_index;
  bool live_out = false;  // holds an output (also a parameter one, when aliased)
  std::vector<const analysis::HloBuffer*> buffers;
  std::string Describe() const;
};

class BufferAssignment {
 public:
  // The module must be scheduled; it must outlive the assignment. Throws
  // UserError when a buffer would need to be both a parameter or constant
  // and something written (copy-insertion was not run).
  static std::unique_ptr<BufferAssignment> Run(const hlo::HloModule& module);

  const hlo::HloModule& module() const { return module_; }
  const analysis::HloAliasAnalysis& alias() const { return *alias_; }
  const analysis::HloLiveRange& liveness() const { return *liveness_; }
  const std::vector<Allocation>& allocations() const { return allocations_; }
  const Slice& SliceOf(const analysis::HloBuffer& buffer) const { return slices_[buffer.id()]; }
  const Slice& SliceOf(const analysis::HloValue& value) const {
    return SliceOf(alias_->BufferOf(value));
  }
  // The arena allocation's index, or -1 when there are no temporaries.
  int64_t arena() const { return arena_; }
  int64_t arena_bytes() const { return arena_ < 0 ? 0 : allocations_[arena_].size; }
  // Most bytes of temporaries live at once under the schedule.
  int64_t peak_bytes() const { return peak_.bytes; }
  int64_t peak_time() const { return peak_.time; }
  // The same with each temporary rounded up to the alignment, the least
  // any arena of aligned slices can be.
  int64_t aligned_peak_bytes() const { return aligned_peak_bytes_; }

  // Moves a buffer's slice (tests use it to show that Check catches it).
  void SetOffset(const analysis::HloBuffer& buffer, int64_t offset);

  // Every problem found, one line each; empty when the assignment is safe.
  std::vector<std::string> Check() const;
  // The report, in the manner of XLA's *.buffer-assignment.txt.
  std::string ToText() const;

 private:
  explicit BufferAssignment(const hlo::HloModule& module) : module_(module) {}
  void Assign();

  const hlo::HloModule& module_;
  std::unique_ptr<analysis::HloAliasAnalysis> alias_;
  std::unique_ptr<analysis::HloLiveRange> liveness_;
  std::vector<Allocation> allocations_;
  std::vector<Slice> slices_;  // by buffer id
  int64_t arena_ = -1;
  analysis::MemoryPeak peak_;
  int64_t aligned_peak_bytes_ = 0;
};

}  // namespace uir::buffers

#endif  // UIR_BUFFERS_BUFFER_ASSIGNMENT_H_
