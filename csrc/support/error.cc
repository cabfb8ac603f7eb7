// Error messages: compiler-style formatting of locations and UIR_CHECK failures.
#include "support/error.h"

#include <cstdio>

namespace uir {
namespace {

std::string FormatParseError(const SourceLocation& loc, std::string_view message,
                             std::string_view source_line) {
  std::ostringstream os;
  os << (loc.file.empty() ? "<text>" : loc.file) << ":" << loc.line << ":" << loc.column
     << ": error: " << message;
  if (!source_line.empty()) {
    os << "\n  " << source_line << "\n  ";
    // Tabs stay tabs so the caret lines up under the column in a terminal.
    for (int64_t i = 1; i < loc.column && i <= static_cast<int64_t>(source_line.size()); ++i) {
      os << (source_line[i - 1] == '\t' ? '\t' : ' ');
    }
    os << "^";
  }
  return os.str();
}

}  // namespace

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kParse:
      return "parse";
    case ErrorKind::kVerify:
      return "verify";
    case ErrorKind::kTrace:
      return "trace";
    case ErrorKind::kShape:
      return "shape";
    case ErrorKind::kCustomCall:
      return "custom_call";
    case ErrorKind::kInternal:
      return "internal";
    case ErrorKind::kUnimplemented:
      return "unimplemented";
    case ErrorKind::kMemoryLimit:
      return "memory_limit";
    case ErrorKind::kSerialization:
      return "serialization";
    case ErrorKind::kOutOfMemory:
      return "out_of_memory";
    case ErrorKind::kDevice:
      return "device";
    case ErrorKind::kDistributed:
      return "distributed";
  }
  return "unknown";
}

std::string DescribeBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " bytes";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f %s (%llu bytes)", value, kUnits[unit],
                static_cast<unsigned long long>(bytes));
  return buf;
}

ParseError::ParseError(SourceLocation loc, std::string_view message, std::string_view source_line)
    : UserError(ErrorKind::kParse, FormatParseError(loc, message, source_line)),
      loc_(std::move(loc)),
      message_(message) {}

VerifyError::VerifyError(std::string_view instruction, std::string_view message)
    : UserError(ErrorKind::kVerify, "verification failed at %" + std::string(instruction) + ": " +
                                        std::string(message)),
      instruction_(instruction) {}

CustomCallError::CustomCallError(std::string_view target, std::string_view message)
    : UserError(ErrorKind::kCustomCall,
                "custom call '" + std::string(target) + "' failed: " + std::string(message)),
      target_(target) {}

void ThrowErrorForTesting(ErrorKind kind, const std::string& message) {
  switch (kind) {
    case ErrorKind::kParse:
      throw ParseError({"test.hlo", 3, 8}, message, "  %x = f32[] bogus()");
    case ErrorKind::kVerify:
      throw VerifyError("add.1", message);
    case ErrorKind::kTrace:
      throw TraceError(message);
    case ErrorKind::kShape:
      throw ShapeError(message);
    case ErrorKind::kCustomCall:
      throw CustomCallError("test_target", message);
    case ErrorKind::kUnimplemented:
      throw UnimplementedError(message);
    case ErrorKind::kMemoryLimit:
      throw MemoryLimitError(message);
    case ErrorKind::kSerialization:
      throw SerializationError(message);
    case ErrorKind::kOutOfMemory:
      throw OutOfMemoryError(message);
    case ErrorKind::kDevice:
      throw DeviceError(message);
    case ErrorKind::kDistributed:
      throw DistributedError(message);
    case ErrorKind::kInternal:
      UIR_CHECK(false) << message;
  }
  throw InternalError("unknown error kind");
}

namespace internal {

CheckMessage::CheckMessage(const char* file, int line, const char* condition) {
  stream_ << "internal error at " << file << ":" << line << ": check failed: " << condition << " ";
}

void CheckThrower::operator&(const CheckMessage& message) const {
  throw InternalError(message.str() +
                      "\n(this is a bug in uir; please report it with the input that caused it)");
}

}  // namespace internal
}  // namespace uir
