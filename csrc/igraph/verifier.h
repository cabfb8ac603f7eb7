// The iGraph verifier.
#ifndef UIR_IGRAPH_VERIFIER_H_
#define UIR_IGRAPH_VERIFIER_H_

#include "igraph/igraph.h"

namespace uir::igraph {

// Throws a VerifyError-kind UserError naming the iOp (with its source line
// when parsed) unless:
//  - every iOp has the slice counts, dtypes and shapes its kind requires
//    (reduce.<op>.row maps (r, c) to (r, 1), .col to (1, c); broadcast the
//    reverse; elementwise iOps take equal shapes);
//  - compute iOps read and write reg or sram only; move's levels are those
//    of its slices; sync names one iPointer on both sides, in sram or dram;
//  - every slice lies inside its iPointer for every value of the index
//    variables (proved from the affine offsets, not sampled); written
//    slices have distinct addresses; prologue and epilogue slices do not
//    depend on loop variables;
//  - reg and sram iPointers fit the hardware model's capacity;
//  - group-scope iOps have an sram buffer, a groupSize dividing numUnit,
//    and whole groups (numParallel a multiple of numUnit).
void Verify(const IGraph& graph);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_VERIFIER_H_
