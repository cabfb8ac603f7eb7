// Host detection through LLVM's TargetParser.
#include "codegen/host.h"

#include <algorithm>

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"
#include "support/machine.h"

namespace uir::codegen {

bool BeyondIsaLimit(const std::string& name) {
  const int64_t limit = IsaVectorLimitBytes();
  if (limit <= 0 || limit >= 64) return false;
  auto starts = [&](const char* prefix) { return name.rfind(prefix, 0) == 0; };
  const bool wide512 = starts("avx512") || starts("avx10") || starts("amx") || name == "evex512";
  if (limit >= 32) return wide512;
  return wide512 || starts("avx") || name == "fma" || name == "f16c" || name == "vaes" ||
         name == "vpclmulqdq";
}

const HostInfo& GetHostInfo() {
  static const HostInfo info = [] {
    HostInfo h;
    h.llvm_version = LLVM_VERSION_STRING;
    h.triple = llvm::sys::getProcessTriple();
    h.cpu_name = llvm::sys::getHostCPUName().str();
    for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
      if (feature.getValue() && !BeyondIsaLimit(feature.getKey().str())) {
        h.features.push_back(feature.getKey().str());
      }
    }
    std::sort(h.features.begin(), h.features.end());
    return h;
  }();
  return info;
}

}  // namespace uir::codegen
