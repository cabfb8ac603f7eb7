#include "runtime/gpu_custom_call.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "support/custom_call.h"
#include "support/error.h"

namespace uir::runtime {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, GpuCallTarget, std::less<>> targets;
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;
  return *registry;
}

}  // namespace

void RegisterGpuCustomCall(const std::string& name, void* function, GpuCallApi api) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.targets[name] = GpuCallTarget{function, api};
}

GpuCallTarget FindGpuCustomCall(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.targets.find(name);
  if (it == r.targets.end()) {
    throw CustomCallError(name, "no target of this name is registered for the CUDA platform");
  }
  return it->second;
}

bool HasGpuCustomCall(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.targets.count(name) != 0;
}

std::vector<std::string> GpuCustomCallTargets() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> out;
  for (const auto& [name, target] : r.targets) out.push_back(name);
  return out;
}

void CallGpuCustomCall(const std::string& name, const GpuCallTarget& target, GpuCallApi api,
                       void* stream, const std::vector<void*>& buffers, const std::string& opaque) {
  std::vector<void*> pointers = buffers;
  if (pointers.empty()) pointers.push_back(nullptr);
  if (target.api != GpuCallApi::kFromInstruction) api = target.api;
  if (api == GpuCallApi::kOriginal) {
    reinterpret_cast<void (*)(void*, void**, const char*, size_t)>(target.function)(
        stream, pointers.data(), opaque.c_str(), opaque.size());
    return;
  }
  CallStatus status;
  reinterpret_cast<void (*)(void*, void**, const char*, size_t, CallStatus*)>(target.function)(
      stream, pointers.data(), opaque.c_str(), opaque.size(), &status);
  if (status.failed) throw CustomCallError(name, status.message);
}

}  // namespace uir::runtime
