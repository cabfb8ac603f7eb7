// HloSchedule: the order instructions run in, per computation, held apart
// from the computations' insertion order.
#ifndef UIR_HLO_SCHEDULE_H_
#define UIR_HLO_SCHEDULE_H_

#include <cstdint>
#include <map>
#include <vector>

namespace uir::hlo {

class HloComputation;
class HloInstruction;
class HloModule;

class HloSchedule {
 public:
  // The sequence of `computation`, or nullptr if it has none.
  const std::vector<HloInstruction*>* sequence(const HloComputation& computation) const;
  void set_sequence(const HloComputation& computation, std::vector<HloInstruction*> sequence);
  bool empty() const { return sequences_.empty(); }

  // Brings the schedule up to date after edits: removed instructions leave
  // their sequence; each new instruction is placed right after the last of
  // its operands and control predecessors (so the sequence stays a valid
  // order); computations that were removed lose their sequence; new ones
  // get their post order. O(total instructions).
  void Update(const HloModule& module);
  // Throws VerifyError if a scheduled computation's sequence misses or
  // repeats a live instruction, holds a removed one, or puts an instruction
  // before one of its operands or control predecessors ("the schedule is
  // stale").
  void Verify(const HloModule& module) const;

 private:
  std::map<int64_t, std::vector<HloInstruction*>> sequences_;  // by computation id
};

}  // namespace uir::hlo

#endif  // UIR_HLO_SCHEDULE_H_
