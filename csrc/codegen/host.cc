// Host detection through LLVM's TargetParser.
#include "codegen/host.h"

#include <algorithm>

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"

namespace uir::codegen {

const HostInfo& GetHostInfo() {
  static const HostInfo info = [] {
    HostInfo h;
    h.llvm_version = LLVM_VERSION_STRING;
    h.triple = llvm::sys::getProcessTriple();
    h.cpu_name = llvm::sys::getHostCPUName().str();
    for (const auto& feature : llvm::sys::getHostCPUFeatures()) {
      if (feature.getValue()) h.features.push_back(feature.getKey().str());
    }
    std::sort(h.features.begin(), h.features.end());
    return h;
  }();
  return info;
}

}  // namespace uir::codegen
