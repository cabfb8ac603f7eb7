// The one place where LLVM's Error/Expected become uir exceptions, and LLVM's
// process-wide initialization. Included only by codegen's .cc files.
#ifndef UIR_CODEGEN_LLVM_UTIL_H_
#define UIR_CODEGEN_LLVM_UTIL_H_

#include <string>
#include <string_view>
#include <utility>

#include "llvm/Support/Error.h"

namespace llvm {
class Module;
}

namespace uir::codegen {

// Registers the native target, its assembly printer and parser, exactly once
// per process. Every entry point that creates LLVM objects calls it first.
void InitializeNativeTargetOnce();

// Consumes `err`; if it holds a failure, throws uir::InternalError naming `context`.
void CheckLlvm(llvm::Error err, std::string_view context);

// Unwraps `value`, throwing uir::InternalError naming `context` on failure.
template <typename T>
T UnwrapLlvm(llvm::Expected<T> value, std::string_view context) {
  if (!value) CheckLlvm(value.takeError(), context);
  return std::move(*value);
}

// The textual IR of `module`, as `opt -S` prints it.
std::string PrintModule(const llvm::Module& module);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_LLVM_UTIL_H_
