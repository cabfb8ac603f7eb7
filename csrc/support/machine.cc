#include "support/machine.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace uir {

std::string MachineModel::ToString() const {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "cores=%lld vector=%lldB L1=%lldKiB L2=%lldKiB dram=%.1fGB/s cache=%.1fGB/s "
                "peak=%.1fGFLOP/s (%.1f flops/B) launch=%.2fus",
                static_cast<long long>(cores), static_cast<long long>(vector_bytes),
                static_cast<long long>(l1_bytes >> 10), static_cast<long long>(l2_bytes >> 10),
                dram_bytes_per_s / 1e9, cache_bytes_per_s / 1e9, flops_per_s / 1e9,
                flops_per_byte(), kernel_overhead_s * 1e6);
  return buf;
}

MachineModel MachineModel::Reference() {
  MachineModel m;
  m.cores = 2;
  m.vector_bytes = 64;
  m.l1_bytes = 48 << 10;
  m.l2_bytes = 2 << 20;
  m.dram_bytes_per_s = 20e9;
  m.cache_bytes_per_s = 100e9;
  m.flops_per_s = 224e9;
  m.kernel_overhead_s = 1e-6;
  return m;
}

namespace {

int64_t VectorBytes() {
  int64_t bytes = 16;
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    bytes = 64;
  } else if (__builtin_cpu_supports("avx2")) {
    bytes = 32;
  }
#endif
  const int64_t limit = IsaVectorLimitBytes();
  return limit > 0 ? std::min(bytes, limit) : bytes;
}

MachineModel Detect() {
  MachineModel m = MachineModel::Reference();
  const unsigned threads = std::thread::hardware_concurrency();
  if (threads > 0) m.cores = threads;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  if (const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1 > 0) m.l1_bytes = l1;
  if (const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0) m.l2_bytes = l2;
#endif
  const int64_t vector = VectorBytes();
  m.flops_per_s = m.flops_per_s * static_cast<double>(vector) / 64.0;
  m.vector_bytes = vector;
  return m;
}

}  // namespace

int64_t IsaVectorLimitBytes() {
  static const int64_t limit = [] {
    const char* isa = std::getenv("UIR_CPU_ISA");
    if (isa == nullptr) return int64_t{0};
    const std::string name(isa);
    if (name == "avx2") return int64_t{32};
    if (name == "sse") return int64_t{16};
    return int64_t{0};
  }();
  return limit;
}

const MachineModel& MachineModel::Host() {
  static const MachineModel kHost = Detect();
  return kHost;
}

}  // namespace uir
