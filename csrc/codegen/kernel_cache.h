// The on-disk cache of compiled kernels: a compile's machine code (its
// object files) and what it found (names, reasons, streaming variants),
// kept in a directory under the hash of everything that decides the code,
// so a later process skips LLVM's emission, optimizer and code generator.
// LLVM-free.
#ifndef UIR_CODEGEN_KERNEL_CACHE_H_
#define UIR_CODEGEN_KERNEL_CACHE_H_

#include <optional>
#include <string>
#include <vector>

#include "codegen/kernel_compiler.h"

namespace uir::codegen {

struct CachedKernels {
  std::vector<std::string> objects;                          // object files, in linking order
  std::vector<std::string> names, reasons, streaming_names;  // per graph
  std::vector<std::vector<int>> streaming_buffers;           // per graph
  std::vector<std::string> loop_names;                       // per loop
};

// The key of compiling `graphs` with `options` on this host: a SHA-256 (hex)
// of uir's and LLVM's versions, the host CPU and its features, the options
// that change code, and every graph's text, aliasing and loop driver.
// Empty when the compile cannot be cached: a loop driver calls a kernel on
// a fixed address (a constant of this process), or text is asked for.
std::string KernelCacheKey(const std::vector<const igraph::IGraph*>& graphs,
                           const KernelCompileOptions& options);

// The entry for `key` in `directory`, or nullopt when there is none or it
// does not read back whole (a truncated or altered file is a miss, and the
// compile that follows writes it again).
std::optional<CachedKernels> LoadCachedKernels(const std::string& directory,
                                               const std::string& key);

// Writes the entry (to a temporary file renamed into place, so readers
// never see half of one). Failing to write (a read-only directory, a full
// disk) leaves the cache as it was: it is only a cache.
void StoreCachedKernels(const std::string& directory, const std::string& key,
                        const CachedKernels& entry);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_KERNEL_CACHE_H_
