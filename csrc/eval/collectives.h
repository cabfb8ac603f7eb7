// Collective operations across the participants (replicas and partitions)
// of a replicated evaluation: each participant runs the whole module on its
// own thread and they meet at each collective.
#ifndef UIR_EVAL_COLLECTIVES_H_
#define UIR_EVAL_COLLECTIVES_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "eval/context.h"
#include "hlo/instruction.h"

namespace uir::eval {

// Where participants hand each other their operands. Every participant
// reaches every collective the same number of times (the program is SPMD);
// one that finishes or fails while others wait makes them fail too, rather
// than hang.
class Rendezvous {
 public:
  explicit Rendezvous(int participants);

  using Contribution = std::shared_ptr<const std::vector<hlo::Literal>>;
  // Deposits `mine` for participant `me`'s next run of `inst`; returns every
  // participant's contribution to that run once all have arrived.
  std::vector<Contribution> Exchange(const hlo::HloInstruction& inst, int me,
                                     std::vector<hlo::Literal> mine);
  // Participant `me` will reach no further collective.
  void Finish(int me, bool failed);
  int participants() const { return n_; }

 private:
  struct Slot {
    std::vector<Contribution> values;
    int arrived = 0;
    int collected = 0;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  int n_;
  std::map<std::pair<const hlo::HloInstruction*, int64_t>, Slot> slots_;
  std::vector<std::map<const hlo::HloInstruction*, int64_t>> runs_;  // per participant
  std::vector<int> finished_;                                        // 0, 1 done, 2 failed
};

// One participant's place in a (possibly replicated) evaluation.
struct Participant {
  int id = 0;  // replica * partitions + partition
  int partitions = 1;
  Rendezvous* rendezvous = nullptr;  // null: a single participant
  uint64_t seed = 0;                 // for rng ops (mixed with the id)
  int64_t max_steps = 0;             // instructions to evaluate at most; 0: no limit
};

// Evaluates a collective (or replica-id / partition-id) for `self`.
hlo::Literal EvalCollective(const hlo::HloInstruction& inst,
                            const std::vector<const hlo::Literal*>& operands,
                            const Participant& self, Context& ctx);

// How many participants `module` needs: replica_count x num_partitions, or
// more if a collective names a larger participant id.
int RequiredParticipants(const hlo::HloModule& module);

}  // namespace uir::eval

#endif  // UIR_EVAL_COLLECTIVES_H_
