// Hardware models of the Unified IR: (numGroup, numUnit) and the capacity
// of each memory level, for the machine this process runs on and for a GPU.
#ifndef UIR_IGRAPH_HARDWARE_H_
#define UIR_IGRAPH_HARDWARE_H_

#include <cstdint>
#include <string>

#include "support/machine.h"

namespace uir::igraph {

// `numGroup` parallel groups of `numUnit` minimal parallel units each. reg
// is private to a unit, sram shared within a group, dram global.
//  - cpu: a unit is a worker thread with its vector registers, a group is
//    one thread (numUnit 1; CPU threads share no scratch), reg is the
//    vector register file, sram is per-task scratch sized to stay in L2.
//  - gpu: a group is a thread block on one SM, a unit is a warp; reg is a
//    warp's share of the register file, sram is shared memory.
struct HardwareModel {
  std::string target = "cpu";  // "cpu" or "gpu"
  int64_t num_group = 1;
  int64_t num_unit = 1;
  int64_t reg_bytes = 2048;      // per unit
  int64_t sram_bytes = 1 << 20;  // per group
  int64_t vector_bytes = 64;     // one vector register (gpu: a warp's 32 lanes of 4 bytes)

  bool operator==(const HardwareModel&) const = default;

  // The CPU model of `machine`: numGroup = cores; reg = 32 vector
  // registers; sram = MachineModel::fast_memory_bytes, the fast memory
  // fusion sized its rows against.
  static HardwareModel Cpu(const MachineModel& machine);
  static HardwareModel Host() { return Cpu(MachineModel::Host()); }
  // An H100-class GPU: 132 SMs, 4 warps per block, 64 KiB of registers per
  // warp's share, 227 KiB of shared memory per block.
  static HardwareModel Gpu();
};

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_HARDWARE_H_
