// Who meets whom at a collective: the participants of a run (participant
// id = replica x num_partitions + partition) grouped as XLA reads a
// collective's replica_groups, channel_id and use_global_device_ids.
#ifndef UIR_HLO_COLLECTIVE_GROUPS_H_
#define UIR_HLO_COLLECTIVE_GROUPS_H_

#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace uir::hlo {

// Per participant of a run of `participants` (of which `partitions` are the
// partitions of one replica), the participants it exchanges with at
// collective `inst`, in group order: global device ids (use_global_device_ids,
// or a single partition), partition ids within its replica (a channel_id
// without global ids) or replica ids of its partition (no channel_id); no
// groups (or one empty group) means every participant of that scope. Empty
// for a participant in no group. Throws ShapeError naming `inst` when a
// group names a participant the run does not have.
std::vector<std::vector<int>> CollectiveGroups(const HloInstruction& inst, int participants,
                                               int partitions);

// How many participants `module` runs as: replica_count x num_partitions,
// or more if a collective names a larger participant id.
int RequiredParticipants(const HloModule& module);

}  // namespace uir::hlo

#endif  // UIR_HLO_COLLECTIVE_GROUPS_H_
