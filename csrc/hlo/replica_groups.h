// Replica groups as lists of device ids: the explicit form as written, the
// iota form `[G,S]<=[dims]T(perm)` and the mesh form
// `mesh['a'=2,'b'=4] {'b'}` (with `device_ids=(...)`, sub-axes `'a':(p)s`
// and `maximal_mesh[device_id=N] {}`) expanded as XLA expands them.
#ifndef UIR_HLO_REPLICA_GROUPS_H_
#define UIR_HLO_REPLICA_GROUPS_H_

#include <cstdint>
#include <vector>

#include "hlo/attributes.h"

namespace uir::hlo {

// The groups `groups` stands for. Throws ShapeError when the form is
// malformed (sizes that do not multiply out, a bad permutation, an unknown
// mesh axis, ...). Does not check uniqueness of ids (CheckReplicaGroups does).
std::vector<std::vector<int64_t>> ExpandReplicaGroups(const ReplicaGroups& groups);

// Expands `groups` and checks what every collective relies on: no negative
// id, no id twice; with `uniform`, every group of the same size. Throws
// ShapeError.
std::vector<std::vector<int64_t>> CheckReplicaGroups(const ReplicaGroups& groups, bool uniform);

}  // namespace uir::hlo

#endif  // UIR_HLO_REPLICA_GROUPS_H_
