// A kernel built in memory as LLVM IR and JIT-compiled: out[i] = a[i] + b[i]
// over float32. It proves, in the installed extension, that IR construction,
// the host-tuned optimizer and ORC all work; `uir demo` and the tests run it.
#ifndef UIR_CODEGEN_SMOKE_KERNEL_H_
#define UIR_CODEGEN_SMOKE_KERNEL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "codegen/jit.h"

namespace uir::codegen {

// Computes out[i] = a[i] + b[i] for begin <= i < end. The three buffers must
// not overlap (the IR marks them noalias, which lets LLVM vectorize without
// runtime checks).
using AddF32Fn = void (*)(const float* a, const float* b, float* out, int64_t begin, int64_t end);

struct AddF32Kernel {
  std::unique_ptr<Jit> jit;  // owns the code `fn` points into
  AddF32Fn fn = nullptr;
  std::string optimized_ir;  // the module after the optimization pipeline
};

// Builds, optimizes (at `opt_level`) and compiles the kernel for the host.
AddF32Kernel CompileAddF32Kernel(int opt_level = 3);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_SMOKE_KERNEL_H_
