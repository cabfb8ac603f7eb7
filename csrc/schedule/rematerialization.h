// Rematerialization: brings a scheduled module's peak of temporary bytes
// under a limit by recomputing values instead of keeping them live.
//
// At the peak, a temporary that is not being read then, was defined by a
// pure, cheap-to-repeat instruction (elementwise ops, broadcast, iota,
// reshape, transpose, slice, concatenate, pad, convert, copy, reduce and
// fusions of them; never side effects, control flow, custom calls, async
// or in-place ops) and is read again later, is recomputed by a clone just
// before its first later use, which (with the uses after it) reads the
// clone. The value then dies after its last earlier use. The clone's
// operands live longer; a candidate counts only if the bytes freed at the
// peak exceed the bytes its operands add there. Each step takes the
// candidate that saves the most; steps repeat until the peak fits.
//
// A multi-output fusion is split the same way: when one of its outputs is
// live at the peak only to be read later, a fusion computing that output
// alone (the instructions it needs, reading the operands it needs) is
// placed before the first later reader, which reads it instead of the
// get-tuple-element; the original output then dies after its earlier
// readers. The multi-output fusion is kept for the others.
//
// If the peak cannot be brought under the limit, MemoryLimitError says the
// peak reached, where, and the largest values live there.
#ifndef UIR_SCHEDULE_REMATERIALIZATION_H_
#define UIR_SCHEDULE_REMATERIALIZATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/module.h"

namespace uir::schedule {

struct Remat {
  std::string instruction;  // recomputed (a split: the multi-output fusion)
  std::string clone;
  int64_t bytes_saved = 0;  // at the peak, net
  int64_t output = -1;      // a split: the output of `instruction` recomputed alone
};

struct RematReport {
  int64_t memory_limit = 0;
  int64_t peak_before = 0;
  int64_t peak_after = 0;
  std::vector<Remat> remats;
  std::string ToString() const;
};

// The module must be scheduled.
RematReport Rematerialize(hlo::HloModule& module, int64_t memory_limit_bytes);

}  // namespace uir::schedule

#endif  // UIR_SCHEDULE_REMATERIALIZATION_H_
