// The compile-flag table and access by name.
#include "codegen/compile_flags.h"

#include <stdexcept>

namespace uir::codegen {
namespace {

std::string Known() {
  std::string list;
  for (const CompileFlagInfo& f : CompileFlagTable()) {
    list += (list.empty() ? "" : ", ") + std::string(f.name);
  }
  return list;
}

[[noreturn]] void Unknown(std::string_view name) {
  throw std::invalid_argument("unknown compile flag '" + std::string(name) +
                              "'; the flags: " + Known());
}

void Check(const CompileFlagInfo& f, int64_t value) {
  bool ok = true;
  std::string want;
  switch (f.kind) {
    case CompileFlagKind::kVectorBits:
      ok = value == 0 || value == 128 || value == 256 || value == 512;
      want = "0, 128, 256 or 512";
      break;
    case CompileFlagKind::kBytes:
    case CompileFlagKind::kCount:
      ok = value >= 0;
      want = ">= 0";
      break;
    case CompileFlagKind::kSwitch:
      ok = value == 0 || value == 1;
      want = "0 or 1";
      break;
  }
  if (!ok) {
    throw std::invalid_argument("compile flag " + std::string(f.name) + " (UIR_FLAGS --cpu_" +
                                std::string(f.name) + ") must be " + want + ", got " +
                                std::to_string(value));
  }
}

}  // namespace

const std::vector<CompileFlagInfo>& CompileFlagTable() {
  static const std::vector<CompileFlagInfo> kTable = {
#define UIR_COMPILE_FLAG(field, type, value, kind, code, doc) \
  {#field, CompileFlagKind::kind, static_cast<int64_t>(value), code, doc},
#include "codegen/compile_flags.def"
#undef UIR_COMPILE_FLAG
  };
  return kTable;
}

std::string_view CompileFlagKindName(CompileFlagKind kind) {
  switch (kind) {
    case CompileFlagKind::kVectorBits:
      return "vector_bits";
    case CompileFlagKind::kBytes:
      return "bytes";
    case CompileFlagKind::kCount:
      return "count";
    case CompileFlagKind::kSwitch:
      return "switch";
  }
  return "";
}

int64_t GetCompileFlag(const CompileFlags& flags, std::string_view name) {
#define UIR_COMPILE_FLAG(field, type, value, kind, code, doc) \
  if (name == #field) return static_cast<int64_t>(flags.field);
#include "codegen/compile_flags.def"
#undef UIR_COMPILE_FLAG
  Unknown(name);
}

void SetCompileFlag(CompileFlags& flags, std::string_view name, int64_t value) {
  for (const CompileFlagInfo& f : CompileFlagTable()) {
    if (f.name == name) Check(f, value);
  }
#define UIR_COMPILE_FLAG(field, type, value_, kind, code, doc) \
  if (name == #field) {                                        \
    flags.field = static_cast<type>(value);                    \
    return;                                                    \
  }
#include "codegen/compile_flags.def"
#undef UIR_COMPILE_FLAG
  Unknown(name);
}

std::string CompileFlagsText(const CompileFlags& flags, bool code_only) {
  std::string out;
  for (const CompileFlagInfo& f : CompileFlagTable()) {
    if (code_only && !f.shapes_code) continue;
    out += (out.empty() ? "" : " ") + std::string(f.name) + "=" +
           std::to_string(GetCompileFlag(flags, f.name));
  }
  return out;
}

}  // namespace uir::codegen
