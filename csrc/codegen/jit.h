// The JIT: compiles LLVM modules for the host CPU with ORC and hands out the
// addresses of their functions. This header is LLVM-free; jit_impl.h is not.
#ifndef UIR_CODEGEN_JIT_H_
#define UIR_CODEGEN_JIT_H_

#include <memory>
#include <string>
#include <string_view>

namespace uir::codegen {

struct JitOptions {
  int opt_level = 3;  // 0..3, LLVM's O0..O3 module pipeline
};

// One ORC LLJIT targeting the host CPU with every feature it has (the
// equivalent of -march=native). Compiled code lives as long as the Jit.
// Not thread-safe for concurrent AddModule calls; Lookup results may be
// called from any thread.
class Jit {
 public:
  explicit Jit(JitOptions options = {});
  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

  // The address of the compiled function `name`; throws InternalError if no
  // module added to this Jit defines it.
  void* Lookup(std::string_view name);

  const JitOptions& options() const { return options_; }

  struct Impl;  // LLVM-side state, defined in jit_impl.h
  Impl& impl() { return *impl_; }

 private:
  JitOptions options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_JIT_H_
