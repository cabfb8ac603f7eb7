// The second half of lowering a fusion: a tile program becomes iGraphs for
// a hardware model. The two innermost iteration dims form the tile; the
// other kept dims become parallel variables and the other reduced dims
// loop variables (their reductions accumulate in the prologue, body and
// epilogue). A kept tile dim that does not divide into tiles gives a
// second iGraph for its tail (so a kernel is one iGraph per box of the
// iteration space); a reduced one finishes its tail in the epilogue.
#ifndef UIR_IGRAPH_TILING_H_
#define UIR_IGRAPH_TILING_H_

#include <string>
#include <vector>

#include "igraph/hardware.h"
#include "igraph/igraph.h"
#include "igraph/tile_program.h"

namespace uir::igraph {

// `program` has been through CollapseDims. Dram iPointer ids are the
// program's tensor ids. Returns false with
// `reason` when the program needs whole rows that do not fit the model's
// sram, or reduces dims a tile cannot hold.
bool LowerTileProgram(const TileProgram& program, const HardwareModel& hardware,
                      std::vector<IGraph>* parts, std::string* reason);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_TILING_H_
