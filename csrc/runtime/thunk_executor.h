// Runs a thunk sequence: in order on the calling thread when that is as
// good, else as a dependency DAG over the worker threads.
#ifndef UIR_RUNTIME_THUNK_EXECUTOR_H_
#define UIR_RUNTIME_THUNK_EXECUTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/thunk.h"

namespace uir::runtime {

struct ThunkExecutorOptions {
  // Below this many bytes touched by the thunks that could run beside
  // another, the sequence runs in order: waking a worker (about a
  // microsecond) costs more than such thunks take.
  int64_t concurrent_bytes = int64_t{1} << 16;
};

class ThunkExecutor {
 public:
  // Derives the DAG: thunk j depends on an earlier thunk i when one writes
  // bytes the other reads or writes, or when both are ordered()
  // (Thunk::ordered) or run ordered thunks in their nested sequences. Chooses the sequential path
  // when no two thunks may run at once, when the thunks that could move fewer than
  // `concurrent_bytes`, or with one worker thread.
  static ThunkExecutor Create(ThunkSequence thunks, const ThunkExecutorOptions& options = {});

  ThunkExecutor(ThunkExecutor&&) = default;
  ThunkExecutor& operator=(ThunkExecutor&&) = default;

  // Runs every thunk on `params`' memory, each after those it depends on.
  // The first exception a thunk throws is rethrown once the running ones
  // finish (thunks not started then are skipped).
  void Execute(const ExecuteParams& params) const;

  const ThunkSequence& thunks() const { return thunks_; }
  bool sequential() const { return sequential_; }
  // Whether some thunk waits for other participants (Thunk::MeetsOthers):
  // then the sequence runs in order on its caller's thread.
  bool meets_others() const { return meets_others_; }
  // Thunks that may start at once (depend on no other).
  int64_t num_sources() const;
  // The union of the thunks' uses (what the sequence as a whole touches),
  // for a thunk that runs this sequence.
  std::vector<BufferUse> BufferUses() const;

  // A header ("N thunks, sequential" or "N thunks, concurrent: K
  // sources"), then a line per thunk with its index and, when it depends
  // on any, "after i, j".
  void AppendText(std::string& out, int indent) const;
  std::string ToText() const;

 private:
  ThunkExecutor() = default;

  ThunkSequence thunks_;
  std::vector<std::vector<int32_t>> successors_;
  std::vector<std::vector<int32_t>> predecessors_;
  std::vector<int32_t> in_degree_;
  bool sequential_ = true;
  bool meets_others_ = false;
};

// The uses of a thunk that runs `sequences`, plus `extra`.
std::vector<BufferUse> UsesOf(const std::vector<const ThunkExecutor*>& sequences,
                              const std::vector<BufferUse>& extra);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_THUNK_EXECUTOR_H_
