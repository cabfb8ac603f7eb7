// The iGraph interpreter: runs an iGraph exactly by its semantics, one
// parallel id, loop id and iOp at a time, on real buffers. It is the
// reference the code emitters are checked against; the arithmetic is the
// evaluator's (eval/elementwise.h), so it agrees with HLO's meaning.
#ifndef UIR_IGRAPH_INTERPRETER_H_
#define UIR_IGRAPH_INTERPRETER_H_

#include <cstdint>
#include <span>
#include <unordered_map>

#include "igraph/igraph.h"

namespace uir::igraph {

// The bytes of each dram iPointer, by its id: size * StorageBytes(dtype)
// at least. Elements are stored densely in the pointer's dtype.
using DramBuffers = std::unordered_map<int64_t, std::span<uint8_t>>;

// Verifies `graph` (so every access is in bounds), then runs it on `dram`. Units run in lockstep
// within a group: each iOp runs for every unit of the group before the next one, which is one legal
// interleaving of the parallel semantics and the one group-scope reduce and broadcast need. Groups
// run one after another unless the iGraph syncs at dram, in which case every unit runs in lockstep.
// reg and sram start zeroed. Throws UserError when a buffer is missing or too small.
void Interpret(const IGraph& graph, const DramBuffers& dram);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_INTERPRETER_H_
