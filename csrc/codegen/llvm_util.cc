// LLVM error conversion and one-time target initialization.
#include "codegen/llvm_util.h"

#include <mutex>

#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "support/error.h"

namespace uir::codegen {

void InitializeNativeTargetOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // These return true on failure; a host LLVM was not built for is a uir bug
    // (the CMake build links the native target), so it is an internal error.
    UIR_CHECK(!llvm::InitializeNativeTarget()) << "LLVM has no native target for this host";
    UIR_CHECK(!llvm::InitializeNativeTargetAsmPrinter()) << "no native asm printer";
    UIR_CHECK(!llvm::InitializeNativeTargetAsmParser()) << "no native asm parser";
  });
}

void CheckLlvm(llvm::Error err, std::string_view context) {
  if (!err) return;
  std::string message = llvm::toString(std::move(err));
  throw InternalError("LLVM error in " + std::string(context) + ": " + message);
}

std::string PrintModule(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, /*AAW=*/nullptr);
  os.flush();
  return text;
}

}  // namespace uir::codegen
