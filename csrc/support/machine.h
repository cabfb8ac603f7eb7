// MachineModel: the host's limits that cost models weigh decisions with.
#ifndef UIR_SUPPORT_MACHINE_H_
#define UIR_SUPPORT_MACHINE_H_

#include <cstdint>
#include <string>

namespace uir {

// What one core of the machine can do, and how many there are. Rates are per
// core; the numbers are estimates for cost models, not measurements taken at
// compile time (decisions must not change from run to run).
struct MachineModel {
  int64_t cores = 1;
  int64_t vector_bytes = 16;         // widest vector register
  int64_t l1_bytes = 32 << 10;       // data cache per core
  int64_t l2_bytes = 1 << 20;        // per core
  double dram_bytes_per_s = 16e9;    // streaming, one core
  double cache_bytes_per_s = 100e9;  // L2-resident streaming, one core
  double flops_per_s = 50e9;         // f32 FMA peak, one core (an FMA counts 2)
  double kernel_overhead_s = 1e-6;   // launching one kernel (thunk dispatch, thread wake-up)

  // Data up to this size is treated as cache-resident: one core's L2.
  int64_t cache_resident_bytes() const { return l2_bytes; }
  // The fast memory a fused row may occupy: half of L2, the rest left for
  // the streams that pass through it.
  int64_t fast_memory_bytes() const { return l2_bytes / 2; }
  // Flops one byte of DRAM traffic buys: the break-even for duplicated work.
  double flops_per_byte() const { return flops_per_s / dram_bytes_per_s; }

  std::string ToString() const;

  // The machine this process runs on: core count and cache sizes from the
  // OS, vector width from the CPU's feature flags, rates scaled from
  // reference() by vector width.
  static const MachineModel& Host();
  // The 2-core Sapphire Rapids VM of machine-limits.md: AVX-512, 48 KiB L1d,
  // 2 MiB L2, about 20 GB/s DRAM and 100 GB/s L2 per core, two 512-bit FMA
  // ports at about 3.5 GHz (224 GFLOP/s f32 per core). Tests use it so that
  // their decisions do not depend on the host.
  static MachineModel Reference();
};

// The widest vectors code may use, in bytes, when the environment variable
// UIR_CPU_ISA narrows what the host offers: "avx2" (32; no AVX-512), "sse"
// (16; no AVX at all), to compile and measure as on a narrower x86-64 host.
// 0 when unset or "native".
int64_t IsaVectorLimitBytes();

}  // namespace uir

#endif  // UIR_SUPPORT_MACHINE_H_
