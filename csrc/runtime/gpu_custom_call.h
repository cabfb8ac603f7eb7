// Custom calls on the GPU with XLA's GPU ABI: targets registered by name
// for the "CUDA" platform, each a C function
//   original: void f(CUstream stream, void** buffers, const char* opaque,
//                    size_t opaque_len)
//   status:   ... , XlaCustomCallStatus* status)
// whose buffers are the device addresses of the operands' array leaves,
// then the result's, in order (tuples flattened). A run looks its targets
// up by name, so the runtime-only build registers its own.
#ifndef UIR_RUNTIME_GPU_CUSTOM_CALL_H_
#define UIR_RUNTIME_GPU_CUSTOM_CALL_H_

#include <string>
#include <vector>

namespace uir::runtime {

// kFromInstruction: registered without a convention (XLA's macros); each
// call says (its instruction's api_version).
enum class GpuCallApi : uint8_t { kOriginal, kStatus, kFromInstruction };

struct GpuCallTarget {
  void* function = nullptr;
  GpuCallApi api = GpuCallApi::kStatus;
};

// Replaces any target of that name.
void RegisterGpuCustomCall(const std::string& name, void* function, GpuCallApi api);
// Throws CustomCallError when `name` has no CUDA target.
GpuCallTarget FindGpuCustomCall(const std::string& name);
bool HasGpuCustomCall(const std::string& name);
std::vector<std::string> GpuCustomCallTargets();

// Calls `target` (in `api` when it was registered without one) on `stream` (the device's; null for
// the default one, and on the simulated GPU, whose buffers are host memory) and raises its reported
// failure as CustomCallError naming `name`.
void CallGpuCustomCall(const std::string& name, const GpuCallTarget& target, GpuCallApi api,
                       void* stream, const std::vector<void*>& buffers, const std::string& opaque);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GPU_CUSTOM_CALL_H_
