// Collectives across the participants of a run (replicas and partitions,
// one per thread of a process or one per process): what one collective of
// an executable does, as the runtime runs it (CollectivePlan), and the
// communicator interface its thunks run it through, with the in-process
// implementation (InProcessClique). The MPI one is in mpi_communicator.h.
#ifndef UIR_RUNTIME_COLLECTIVES_H_
#define UIR_RUNTIME_COLLECTIVES_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/window.h"
#include "support/primitive_type.h"

namespace uir::runtime {

// One collective of an executable, on one operand. The operand (and the
// result) are seen as [outer, dim, inner] elements in memory, `dim` the
// dimension gathered, scattered or split; an all-reduce is [1, n, 1].
struct CollectivePlan {
  enum class Op : uint8_t {
    kAllReduce,
    kAllGather,
    kReduceScatter,
    kAllToAll,
    kPermute,
    kBroadcast,
    kReplicaId,
    kPartitionId,
  };
  Op op = Op::kAllReduce;
  PrimitiveType type = PrimitiveType::kF32;
  FoldOp fold = FoldOp::kAdd;  // kAllReduce, kReduceScatter
  // Its number among the executable's collectives, the same on every
  // participant: what participants meet at.
  int64_t id = 0;
  std::string name;  // the HLO instruction, for errors
  int participants = 1;
  int partitions = 1;
  // Per participant: the participants it exchanges with, in group order.
  std::vector<std::vector<int>> groups;
  // kPermute, per participant: whom it sends to, whom it receives from
  // (-1: nobody; a result received from nobody is zeros).
  std::vector<int> send_to, receive_from;
  // The operand's layout in memory; `dim` is the operand's extent (a
  // gather's result has groups x dim, a scatter's dim / groups).
  int64_t outer = 1, dim = 1, inner = 1;

  int64_t element_bytes() const { return StorageBytes(type); }
  int64_t Elements() const { return outer * dim * inner; }
  // The group of `participant`, and its place there.
  const std::vector<int>& GroupOf(int participant) const {
    return groups[static_cast<size_t>(participant)];
  }
  int IndexIn(int participant) const;
  static std::string_view OpName(Op op);
  // "all-reduce add f32 [1,1024,1] groups {{0,1},{2,3}}", for thunk text.
  std::string ToString() const;
};

// How a participant meets the others. The collectives work on contiguous
// blocks; a thunk arranges its operand into them (CollectiveThunk). Every
// call blocks until the participant's part is done, and throws
// DistributedError when another participant failed or left.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // this participant's id
  virtual int size() const = 0;  // participants in all
  // Before a run's first collective, on every participant: checks that
  // they all run the same program (`program`, a fingerprint) and sets up
  // what its collectives need. Throws DistributedError when they differ.
  virtual void Prepare(uint64_t program, std::span<const CollectivePlan* const> plans) = 0;
  // `out` = the fold of every group member's `count` elements at `in`.
  virtual void AllReduce(const CollectivePlan& plan, const void* in, void* out, int64_t count) = 0;
  // `out` = each group member's `bytes` at `in`, in group order.
  virtual void AllGather(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) = 0;
  // `in` holds one block of `count` elements per member; `out` = the fold
  // of every member's block at this participant's place.
  virtual void ReduceScatter(const CollectivePlan& plan, const void* in, void* out,
                             int64_t count) = 0;
  // `in` holds one block of `bytes` per member; block j of `out` = member
  // j's block at this participant's place.
  virtual void AllToAll(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) = 0;
  // Sends `bytes` at `in` to plan.send_to[rank()] and receives into `out`
  // from plan.receive_from[rank()] (left alone when nobody sends).
  virtual void Permute(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) = 0;
  // `out` = the first group member's `bytes` at `in`.
  virtual void Broadcast(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) = 0;
  // This participant failed with `error` and reaches no further
  // collective: the others' waits for it (and its own work still waiting)
  // end with DistributedError naming it.
  virtual void Fail(const std::string& error) = 0;
};

// acc[i] = acc[i] op x[i] for `count` elements of `type`, as HLO's folds
// do (FoldOp: integers wrap, floats' maximum and minimum propagate NaN,
// narrow floats computed in f32 and rounded once per step).
void FoldInto(PrimitiveType type, FoldOp op, void* acc, const void* x, int64_t count);
// Whether FoldInto has a loop for `op` on `type`.
bool FoldSupported(PrimitiveType type, FoldOp op);

// The participants of a run inside one process, one thread each: the
// communicators they meet through. Each participant reads the others'
// operands in place; folds run in group order, so results are the same on
// every participant and the same as the evaluator's.
class InProcessClique {
 public:
  explicit InProcessClique(int participants);
  ~InProcessClique();
  InProcessClique(const InProcessClique&) = delete;
  InProcessClique& operator=(const InProcessClique&) = delete;

  int size() const { return n_; }
  // The communicator of participant `rank` (valid while the clique lives).
  Communicator& Member(int rank);
  // Participant `rank` will reach no further collective: it finished, or
  // failed with `error`. Participants waiting for it then throw
  // DistributedError naming it (and its error).
  void Leave(int rank, const std::string& error);

 private:
  class Member_;
  struct Meeting;
  // Waits until every member of `group` deposited its operand for this run
  // of collective `id`; returns the meeting (every member's `in` and `out`).
  std::shared_ptr<Meeting> Arrive(int64_t id, const std::string& what,
                                  const std::vector<int>& group, int rank, const void* in,
                                  void* out);
  // Waits until every member finished reading the others' operands.
  void Depart(const std::shared_ptr<Meeting>& m, const std::string& what, int rank);
  // Throws when a member of `group` other than `rank` left without
  // reaching the meeting (locked).
  void CheckGone(const Meeting& m, const std::string& what, int rank, bool departing) const;

  int n_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<int64_t, int, int64_t>, std::shared_ptr<Meeting>> meetings_;
  std::vector<std::map<int64_t, int64_t>> runs_;  // per participant: runs of each collective
  std::vector<int> left_;                         // 0 here, 1 finished, 2 failed
  std::vector<std::string> errors_;
  std::vector<std::unique_ptr<Member_>> members_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_COLLECTIVES_H_
