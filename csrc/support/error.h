// Error classes shared by every stage, and the UIR_CHECK invariant macro.
#ifndef UIR_SUPPORT_ERROR_H_
#define UIR_SUPPORT_ERROR_H_

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace uir {

// The kind of an error, one per Python exception class (see csrc/python/support.cc).
enum class ErrorKind {
  kParse,          // malformed text: HLO, iGraph or flags
  kVerify,         // a well-formed program that breaks an IR invariant
  kTrace,          // a Python function that cannot be traced
  kShape,          // operands whose shapes do not fit an operation
  kCustomCall,     // a custom-call target that reported a failure
  kInternal,       // a bug in uir itself
  kUnimplemented,  // a valid program using something uir does not support yet
  kMemoryLimit,    // a program that cannot be fit into the memory it was given
  kSerialization,  // a serialized executable that cannot be loaded here
  kOutOfMemory,    // memory a program needs that cannot be allocated
  kDevice,         // a device (GPU) a program needs that this process lacks, or that failed
  kDistributed,    // another participant of a run across processes failed, or runs another program
};

// Returns the stable lower-case name of `kind` ("parse", "verify", ...).
std::string_view ErrorKindName(ErrorKind kind);

// Base of every error uir raises. what() is the full message, ready to print.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// An error the user can fix by changing what they passed in.
class UserError : public Error {
 public:
  using Error::Error;
};

// A place in a text: 1-based line and column, and the file name if known.
struct SourceLocation {
  std::string file;  // empty for text that did not come from a file
  int64_t line = 0;
  int64_t column = 0;
};

// Malformed text. what() reads like a compiler's diagnostic:
//   file:line:col: error: message
//     <the source line>
//           ^
class ParseError : public UserError {
 public:
  // `source_line` is the text of line `loc.line`, without its newline; it may be
  // empty when the caller does not have it.
  ParseError(SourceLocation loc, std::string_view message, std::string_view source_line = {});
  const SourceLocation& location() const { return loc_; }
  // The message alone, without location and source excerpt.
  const std::string& message() const { return message_; }

 private:
  SourceLocation loc_;
  std::string message_;
};

// An IR invariant broken by a program; the message names the instruction.
class VerifyError : public UserError {
 public:
  VerifyError(std::string_view instruction, std::string_view message);
  const std::string& instruction() const { return instruction_; }

 private:
  std::string instruction_;
};

// A Python function that cannot be traced; the message names the operation and shapes.
class TraceError : public UserError {
 public:
  explicit TraceError(const std::string& message) : UserError(ErrorKind::kTrace, message) {}
};

// Operand shapes that do not fit an operation.
class ShapeError : public UserError {
 public:
  explicit ShapeError(const std::string& message) : UserError(ErrorKind::kShape, message) {}
};

// A custom-call target that failed; the message is the target's own.
class CustomCallError : public UserError {
 public:
  CustomCallError(std::string_view target, std::string_view message);
  const std::string& target() const { return target_; }

 private:
  std::string target_;
};

// A memory limit no schedule or rematerialization can meet.
class MemoryLimitError : public UserError {
 public:
  explicit MemoryLimitError(const std::string& message)
      : UserError(ErrorKind::kMemoryLimit, message) {}
};

// Memory that could not be allocated, with what it was for (the op, its
// shape and the bytes).
class OutOfMemoryError : public UserError {
 public:
  explicit OutOfMemoryError(const std::string& message)
      : UserError(ErrorKind::kOutOfMemory, message) {}
};

// A readable count of bytes: "4.0 PiB (4503599627370496 bytes)".
std::string DescribeBytes(uint64_t bytes);

// A serialized executable that is damaged, from another uir or LLVM, or
// for a CPU this one is not.
class SerializationError : public UserError {
 public:
  explicit SerializationError(const std::string& message)
      : UserError(ErrorKind::kSerialization, message) {}
};

// A device a program needs that this process does not have (no GPU, no
// CUDA driver), or a driver call that failed, with the driver's message.
class DeviceError : public UserError {
 public:
  explicit DeviceError(const std::string& message) : UserError(ErrorKind::kDevice, message) {}
};

// A run across several participants (threads or processes) that cannot go
// on: another participant failed (the message names it and carries its
// error), runs another program, or the run lacks the participants its
// collectives need.
class DistributedError : public UserError {
 public:
  explicit DistributedError(const std::string& message)
      : UserError(ErrorKind::kDistributed, message) {}
};

// A bug in uir: a broken internal invariant. Raised by UIR_CHECK.
class InternalError : public Error {
 public:
  explicit InternalError(const std::string& message) : Error(ErrorKind::kInternal, message) {}
};

// A valid program that uses something uir does not implement yet.
class UnimplementedError : public Error {
 public:
  explicit UnimplementedError(const std::string& message)
      : Error(ErrorKind::kUnimplemented, message) {}
};

// Throws the error of `kind` with `message`; the test suite uses this to check
// that each kind reaches Python as the right class.
[[noreturn]] void ThrowErrorForTesting(ErrorKind kind, const std::string& message);

namespace internal {

// Collects a UIR_CHECK failure message; the `&` in UIR_CHECK throws it.
class CheckMessage {
 public:
  CheckMessage(const char* file, int line, const char* condition);
  template <typename T>
  CheckMessage& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }
  std::string str() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
};

struct CheckThrower {
  [[noreturn]] void operator&(const CheckMessage& message) const;
};

}  // namespace internal
}  // namespace uir

// UIR_CHECK(cond) << "context"; throws uir::InternalError when `cond` is false.
// Used for invariants that only a uir bug can break; never compiled out.
#define UIR_CHECK(cond)                   \
  if (cond) {                             \
  } else /* NOLINT(readability/braces) */ \
    ::uir::internal::CheckThrower() & ::uir::internal::CheckMessage(__FILE__, __LINE__, #cond)

#endif  // UIR_SUPPORT_ERROR_H_
