// A collective thunk: an all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute or collective-broadcast on each of its operands (or a
// replica-id or partition-id), run through the run's communicator
// (collectives.h). Operands along a dimension that is not the outermost are
// packed into contiguous blocks first, and the results unpacked.
#ifndef UIR_RUNTIME_COLLECTIVE_THUNK_H_
#define UIR_RUNTIME_COLLECTIVE_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/collectives.h"
#include "runtime/thunk.h"

namespace uir::runtime {

class CollectiveThunk final : public Thunk {
 public:
  struct Part {
    CollectivePlan plan;
    BufferSlice in, out;  // replica-id, partition-id: `in` unused
  };
  static std::unique_ptr<CollectiveThunk> Create(std::string name, std::vector<Part> parts);

  const std::vector<Part>& parts() const { return parts_; }
  // Throws DistributedError without a communicator, or with one of
  // another number of participants than the plans'.
  void Execute(const ExecuteParams& params) const override;
  bool MeetsOthers() const override;

 private:
  CollectiveThunk(std::string name, std::vector<Part> parts, std::vector<BufferUse> uses)
      : Thunk(Kind::kCollective, std::move(name), std::move(uses)), parts_(std::move(parts)) {}
  std::string Details() const override;
  void Run(const Part& part, Communicator& comm, const ExecuteParams& params) const;

  std::vector<Part> parts_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_COLLECTIVE_THUNK_H_
