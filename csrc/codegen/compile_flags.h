// The CPU backend's compile options as one struct made from the table in
// compile_flags.def, and the table itself for those who handle the options
// by name (the bindings, the AOT format, the digest). LLVM-free.
#ifndef UIR_CODEGEN_COMPILE_FLAGS_H_
#define UIR_CODEGEN_COMPILE_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace uir::codegen {

struct CompileFlags {
#define UIR_COMPILE_FLAG(field, type, value, kind, code, doc) type field = value;
#include "codegen/compile_flags.def"
#undef UIR_COMPILE_FLAG
};

// How a flag's value is spelled and checked.
enum class CompileFlagKind { kVectorBits, kBytes, kCount, kSwitch };

struct CompileFlagInfo {
  std::string_view name;  // the field; UIR_FLAGS spells it --cpu_<name>
  CompileFlagKind kind;
  int64_t default_value;  // a switch's as 0 or 1
  bool shapes_code;       // whether it changes the kernels' machine code
  std::string_view doc;
};

// Every flag, in the table's order.
const std::vector<CompileFlagInfo>& CompileFlagTable();
// The kind's name: "vector_bits", "bytes", "count" or "switch".
std::string_view CompileFlagKindName(CompileFlagKind kind);

// Flag `name`'s value, a switch's as 0 or 1. An unknown name is a
// std::invalid_argument listing the known ones.
int64_t GetCompileFlag(const CompileFlags& flags, std::string_view name);
// Sets flag `name` to `value` after checking it against the flag's kind; a
// value out of its range, or an unknown name, is a std::invalid_argument
// that names the flag.
void SetCompileFlag(CompileFlags& flags, std::string_view name, int64_t value);

// "name=value" for every flag (or only those that shape the code), space
// separated, in the table's order.
std::string CompileFlagsText(const CompileFlags& flags, bool code_only = false);

}  // namespace uir::codegen

#endif  // UIR_CODEGEN_COMPILE_FLAGS_H_
