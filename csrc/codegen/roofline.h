// The machine's ceilings, measured in the running process so benchmarks
// divide by this machine's limits, not another's: a STREAM triad over the
// worker threads and a peak-FMA loop JIT-compiled at the host's vector width.
#ifndef UIR_CODEGEN_ROOFLINE_H_
#define UIR_CODEGEN_ROOFLINE_H_

#include <cstdint>

namespace uir::codegen {

// GB/s (1e9 bytes, STREAM counting: 2 reads and 1 write per element, no
// write-allocate traffic) of a[i] = b[i] + s * c[i] over `elements` floats
// per array on every worker thread; the best of `repeats`.
double StreamTriadGBs(int64_t elements, int repeats = 5);

// GFLOP/s of independent fused multiply-adds at the host's widest vector
// width on every worker thread; the best of `repeats`.
double FmaPeakGflops(int repeats = 3);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_ROOFLINE_H_
