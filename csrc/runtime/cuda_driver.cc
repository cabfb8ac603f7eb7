// The driver API's functions by name from libcuda.so.1; CUresult 0 is success.
#include "runtime/cuda_driver.h"

#include <dlfcn.h>

namespace uir::runtime {
namespace {

using CuResult = int;
using CuDevice = int;
// Attributes of cuDeviceGetAttribute, as the driver API numbers them.
constexpr int kMultiprocessorCount = 16;
constexpr int kComputeCapabilityMajor = 75;
constexpr int kComputeCapabilityMinor = 76;

template <typename F>
F Symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

CudaDriverInfo Probe() {
  CudaDriverInfo info;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    info.why = std::string("no CUDA driver: ") + (err != nullptr ? err : "libcuda.so.1 not found");
    return info;
  }
  auto init = Symbol<CuResult (*)(unsigned)>(lib, "cuInit");
  auto version = Symbol<CuResult (*)(int*)>(lib, "cuDriverGetVersion");
  auto count = Symbol<CuResult (*)(int*)>(lib, "cuDeviceGetCount");
  auto get = Symbol<CuResult (*)(CuDevice*, int)>(lib, "cuDeviceGet");
  auto name = Symbol<CuResult (*)(char*, int, CuDevice)>(lib, "cuDeviceGetName");
  auto attribute = Symbol<CuResult (*)(int*, int, CuDevice)>(lib, "cuDeviceGetAttribute");
  auto memory = Symbol<CuResult (*)(size_t*, CuDevice)>(lib, "cuDeviceTotalMem_v2");
  if (init == nullptr || count == nullptr || get == nullptr || name == nullptr ||
      attribute == nullptr || memory == nullptr || version == nullptr) {
    info.why = "libcuda.so.1 lacks the driver API's device functions";
    return info;
  }
  if (const CuResult r = init(0); r != 0) {
    info.why = "cuInit failed with CUresult " + std::to_string(r);
    return info;
  }
  version(&info.driver_version);
  int n = 0;
  if (const CuResult r = count(&n); r != 0) {
    info.why = "cuDeviceGetCount failed with CUresult " + std::to_string(r);
    return info;
  }
  for (int k = 0; k < n; ++k) {
    CuDevice d = 0;
    if (get(&d, k) != 0) continue;
    GpuDevice dev;
    dev.index = k;
    char buffer[256] = {};
    if (name(buffer, sizeof(buffer) - 1, d) == 0) dev.name = buffer;
    attribute(&dev.major, kComputeCapabilityMajor, d);
    attribute(&dev.minor, kComputeCapabilityMinor, d);
    attribute(&dev.multiprocessors, kMultiprocessorCount, d);
    size_t bytes = 0;
    if (memory(&bytes, d) == 0) dev.memory_bytes = static_cast<int64_t>(bytes);
    info.devices.push_back(dev);
  }
  info.available = !info.devices.empty();
  if (!info.available) info.why = "the CUDA driver loaded but reports no device";
  return info;
}

}  // namespace

const CudaDriverInfo& CudaDriver() {
  static const CudaDriverInfo info = Probe();
  return info;
}

}  // namespace uir::runtime
