// Ahead-of-time executables: a CpuExecutable as bytes that another process
// loads without running LLVM's emission, optimizer or code generator, nor
// uir's HLO passes. LLVM-free.
//
// A blob holds, after an 8-byte magic and a format version:
//   - the host it was compiled for: uir's and LLVM's versions, the target
//     triple, the CPU's name and every CPU feature the code may use;
//   - the options that shaped the code and the thunks, the hardware model
//     the Kernel Graph was lowered for, and the thread count its native
//     loops were planned for;
//   - the optimized, scheduled HLO module (text);
//   - the buffer assignment (every value's allocation, offset and size);
//   - the signature: parameter and result leaves, donations;
//   - the thunk sequence (text) and a digest of the compiled program (every
//     iGraph's text, aliasing and native loop);
//   - the machine code: object files and the names of their functions;
//   - a SHA-256 of all the bytes before it.
// Loading checks the magic, the length of every field and the digest (a
// damaged or truncated blob), the versions and the CPU features (every one
// the code may use must be on this host); then parses the module, assigns
// its buffers and lowers it again as XLA's AOT loader re-runs its thunk
// emitter, and refuses the blob unless the buffer assignment, the program
// digest and the thunk sequence come out as stored: the machine code then
// fits the buffers it is handed. Every refusal is a SerializationError
// saying what did not match.
#ifndef UIR_CODEGEN_AOT_H_
#define UIR_CODEGEN_AOT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "buffers/buffer_assignment.h"
#include "codegen/cpu_executable.h"
#include "codegen/kernel_compiler.h"
#include "hlo/module.h"
#include "igraph/kernel_graph.h"

namespace uir::codegen {

// What a blob says of the host it was compiled on.
struct AotHost {
  std::string uir_version, llvm_version, triple, cpu_name;
  std::vector<std::string> features;  // without '+', sorted
};

// A SHA-256 (hex) of what decides the machine code of compiling `graphs`
// with `options`, the host aside: every graph's text and aliasing, the
// native loops, and the options that change code.
std::string KernelProgramDigest(const std::vector<const igraph::IGraph*>& graphs,
                                const KernelCompileOptions& options);

// Every value's place in `assignment`, one line each, without the ids of
// the analyses (which differ between a module and its text parsed again).
std::string PlacementText(const buffers::BufferAssignment& assignment);

// The blob of `exe`, with the module, buffer assignment and hardware
// model of the Kernel Graph it was compiled from. Throws SerializationError
// when the module's text, parsed again, gets another buffer assignment
// (then compile the parsed module and serialize that).
std::string SerializeExecutable(const CpuExecutable& exe);

// An executable loaded from a blob, with what it runs on: the module, its
// buffer assignment and Kernel Graph (each outlives what points into it).
struct LoadedExecutable {
  std::shared_ptr<hlo::HloModule> module;
  std::shared_ptr<buffers::BufferAssignment> assignment;
  std::shared_ptr<igraph::KernelGraph> graph;
  std::unique_ptr<CpuExecutable> executable;
  AotHost host;  // the host the blob was compiled on
};

// Loads a blob written by SerializeExecutable. Throws SerializationError
// for a damaged, truncated or foreign blob, or one for CPU features this
// host lacks.
LoadedExecutable DeserializeExecutable(std::string_view blob);

// The CPU features in `required` this host lacks (empty: none).
std::vector<std::string> MissingFeatures(const std::vector<std::string>& required);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_AOT_H_
