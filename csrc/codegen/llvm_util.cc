// LLVM error conversion and one-time target initialization.
#include "codegen/llvm_util.h"

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
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
    // Tile loops (a move or an op over 64 or more elements) are left whole
    // for the loop vectorizer. Unrolled first, as LLVM does below its default
    // of 512 trips, they become one basic block of scalar loads and stores
    // too long for the SLP vectorizer's dependence limits: the code stays
    // scalar, and the machine schedulers, whose cost grows with the square
    // of a block's length, took 8.5 of ResNet-50's 10.6 s of compile. Loops
    // of a few trips, and a vectorized loop's few iterations, are still
    // unrolled whole. LLVM is linked into this library alone, so its
    // options are this library's to set.
    // UIR_LLVM_OPTIONS (words split on spaces, as llc takes them) come after
    // and override uir's, for experiments with LLVM's own knobs.
    std::vector<std::string> words = {"uir", "-unroll-full-max-count=16"};
    if (const char* extra = std::getenv("UIR_LLVM_OPTIONS")) {
      std::istringstream in(extra);
      for (std::string w; in >> w;) words.push_back(w);
    }
    std::vector<const char*> argv;
    for (const std::string& w : words) argv.push_back(w.c_str());
    std::string errors;
    llvm::raw_string_ostream err(errors);
    if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &err)) {
      throw UserError(ErrorKind::kParse, "UIR_LLVM_OPTIONS: LLVM refused the options: " + errors);
    }
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
