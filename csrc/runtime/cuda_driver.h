// The CUDA driver, loaded at run time: dlopen("libcuda.so.1"), so uir builds
// and imports on machines with no GPU and no CUDA toolkit. Only what the
// runtime asks of the driver is declared here; nothing of CUDA's headers.
#ifndef UIR_RUNTIME_CUDA_DRIVER_H_
#define UIR_RUNTIME_CUDA_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/gpu_plan.h"

namespace uir::runtime {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int64_t memory_bytes = 0;
  int multiprocessors = 0;
};

// What this process finds of the driver: whether it loaded and initialised
// (and if not, why), and its devices.
struct CudaDriverInfo {
  bool available = false;
  std::string why;  // when not available: the library or the call that failed
  int driver_version = 0;
  std::vector<CudaDeviceInfo> devices;
};

// Probed once per process (later calls return the first answer).
const CudaDriverInfo& CudaDriver();

// The CUDA device `ordinal` with `ptx` loaded (the driver compiles it for
// the card) and `kernels` looked up in it, on its primary context. Throws
// DeviceError when there is no such device, Error(kInternal) with the
// driver's message when the driver refuses a call.
std::unique_ptr<GpuDevice> NewCudaDevice(int ordinal, const std::string& ptx,
                                         const std::vector<GpuKernelInfo>& kernels);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CUDA_DRIVER_H_
