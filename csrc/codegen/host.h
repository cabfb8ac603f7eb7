// What LLVM sees of the machine uir compiles for: the host CPU and its features.
#ifndef UIR_CODEGEN_HOST_H_
#define UIR_CODEGEN_HOST_H_

#include <string>
#include <vector>

namespace uir::codegen {

struct HostInfo {
  std::string llvm_version;           // e.g. "19.1.7"
  std::string triple;                 // the process triple, e.g. "x86_64-pc-linux-gnu"
  std::string cpu_name;               // LLVM's name for the host CPU, e.g. "sapphirerapids"
  std::vector<std::string> features;  // enabled features, sorted, without the '+'
};

// Detects the host once (thread-safe) and returns the same object afterwards.
// Under UIR_CPU_ISA=avx2 (or sse) the features beyond it are left out, and
// kernels are compiled without them (IsaVectorLimitBytes).
const HostInfo& GetHostInfo();

// Whether the x86 feature `name` lies beyond what UIR_CPU_ISA allows.
bool BeyondIsaLimit(const std::string& name);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_HOST_H_
