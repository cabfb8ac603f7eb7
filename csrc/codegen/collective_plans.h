// Collective nodes of a Kernel Graph as the runtime runs them: each
// operand's plan (runtime/collectives.h) with its slices, for a
// CollectiveThunk.
#ifndef UIR_CODEGEN_COLLECTIVE_PLANS_H_
#define UIR_CODEGEN_COLLECTIVE_PLANS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "igraph/kernel_graph.h"
#include "runtime/collective_thunk.h"

namespace uir::codegen {

// What a collective node runs: each operand's plan with its slices, and
// the operand leaves a start forwards in its result that are not in place
// (copied before the collective starts).
struct NodeCollective {
  std::vector<runtime::CollectiveThunk::Part> parts;
  std::vector<std::pair<runtime::BufferSlice, runtime::BufferSlice>> forwards;  // from, to
};

// Collective node `node` (a collective, its start, or an async-start
// wrapping one collective of the start's operands) for a run of
// `participants` (of which `partitions` are one replica's partitions), its
// parts numbered from `*next_id` on (which it advances). Nullopt with
// `*refused` set when the runtime has no plan for it: a done (which only
// waits for its start), an all-reduce whose reducer is not one add,
// multiply, maximum, minimum, and or or of its parameters (or that fold on
// the element type), operand and result in different layouts, a dimension
// that does not split into the groups, a tuple all-to-all, a permute whose
// pairs repeat a source or target, or groups that leave a participant out.
std::optional<NodeCollective> CollectiveOf(const igraph::KernelNode& node, int participants,
                                           int partitions, int64_t* next_id, std::string* refused);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_COLLECTIVE_PLANS_H_
