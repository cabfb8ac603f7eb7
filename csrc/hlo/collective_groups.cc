#include "hlo/collective_groups.h"

#include <algorithm>
#include <string>

#include "hlo/replica_groups.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

std::vector<std::vector<int64_t>> ExpandGroups(const HloInstruction& inst) {
  const auto rg = inst.attributes().GetOr<ReplicaGroups>(AttrKey::kReplicaGroups);
  if (!rg) return {};
  return ExpandReplicaGroups(*rg);
}

}  // namespace

std::vector<std::vector<int>> CollectiveGroups(const HloInstruction& inst, int participants,
                                               int partitions) {
  const int n = participants;
  const int p = std::max(1, partitions);
  const bool global = inst.attributes().GetOr<bool>(AttrKey::kUseGlobalDeviceIds).value_or(false);
  const bool channel = inst.attributes().Has(AttrKey::kChannelId);
  std::vector<std::vector<int64_t>> groups = ExpandGroups(inst);
  const bool everyone = groups.empty() || (groups.size() == 1 && groups[0].empty());
  std::vector<std::vector<int>> out(static_cast<size_t>(n));
  for (int self = 0; self < n; ++self) {
    auto to_participant = [&](int64_t id) -> int64_t {
      if (global || p == 1) return id;
      if (channel) return (self / p) * p + id;  // partitions of my replica
      return id * p + self % p;                 // replicas of my partition
    };
    if (everyone) {
      const int64_t count = global || p == 1 ? n : channel ? p : n / p;
      groups.assign(1, {});
      for (int64_t i = 0; i < count; ++i) groups[0].push_back(i);
    }
    for (const auto& g : groups) {
      std::vector<int> members;
      bool mine = false;
      for (int64_t id : g) {
        const int64_t q = to_participant(id);
        if (q < 0 || q >= n) {
          throw ShapeError("%" + inst.name() + " names participant " + std::to_string(q) + " of " +
                           std::to_string(n) + " (run it with more replicas)");
        }
        members.push_back(static_cast<int>(q));
        mine = mine || q == self;
      }
      if (mine) {
        out[static_cast<size_t>(self)] = std::move(members);
        break;
      }
    }
  }
  return out;
}

int RequiredParticipants(const HloModule& module) {
  const int64_t partitions = std::max<int64_t>(1, module.config().num_partitions);
  int64_t need = std::max<int64_t>(1, module.config().replica_count) * partitions;
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      const bool global =
          inst->attributes().GetOr<bool>(AttrKey::kUseGlobalDeviceIds).value_or(false) ||
          partitions == 1;
      if (global) {
        for (const auto& g : ExpandGroups(*inst))
          for (int64_t id : g) need = std::max(need, id + 1);
      }
      if (auto pairs = inst->attributes().GetOr<std::vector<std::vector<int64_t>>>(
              AttrKey::kSourceTargetPairs)) {
        for (const auto& pr : *pairs)
          for (int64_t id : pr) need = std::max(need, id + 1);
      }
    }
  }
  return static_cast<int>(need);
}

}  // namespace uir::hlo
