// The custom-call registry: the host functions that `custom-call`
// instructions name by custom_call_target. The evaluator and the CPU
// executor run the same targets on the same call frames, so the registry
// sits below both.
//
// A target is either a C function with one of XLA's CPU calling conventions
// (see uir/include/uir/custom_call.h) or a C++ function on a call frame (the
// runtime's built-in targets, runtime/builtin_targets.h, and Python
// callables through the bindings). A call frame is buffers, element types
// and dimensions: nothing here knows HLO instructions or literals (the
// evaluator adapts in eval/custom_call.h).
#ifndef UIR_SUPPORT_CUSTOM_CALL_H_
#define UIR_SUPPORT_CUSTOM_CALL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/primitive_type.h"

namespace uir {

enum class CustomCallApi {
  kOriginal,                // void f(void* out, const void** in)
  kStatusReturning,         // ... , UirCustomCallStatus* status)
  kStatusReturningUnified,  // ... , const char* opaque, size_t opaque_len, status)
  // XLA's typed FFI (XLA_FFI_Error* f(XLA_FFI_CallFrame*)): instructions
  // may ask for it; C targets in it are not run.
  kTypedFfi,
  // A C target registered without a convention (XLA's registration
  // macros): the instruction's api_version says, XLA's default (original)
  // when it gives none.
  kFromInstruction,
};

// The status a C target reports a failure through: uir/custom_call.h's
// UirCustomCallStatus (its failure hook) first, then ours, plain data so
// the layout is standard. Host and GPU targets alike.
struct CallStatus {
  void (*set_failure)(CallStatus*, const char*, size_t) = &CallStatus::SetFailure;
  bool failed = false;
  char message[1024] = {};

  static void SetFailure(CallStatus* status, const char* message, size_t length) {
    status->failed = true;
    const size_t n = length < sizeof(status->message) - 1 ? length : sizeof(status->message) - 1;
    for (size_t k = 0; message != nullptr && k < n; ++k) status->message[k] = message[k];
    status->message[n] = '\0';
  }
};

// The name of `api` as XLA's api_version spells it ("API_VERSION_ORIGINAL").
std::string_view CustomCallApiName(CustomCallApi api);

// A value a target reads or writes: a row-major array of `type` with
// `dims` at `data`, a tuple of `elements`, or a token (no data).
struct CallBuffer {
  enum class Kind : uint8_t { kArray, kTuple, kToken };
  Kind kind = Kind::kArray;
  void* data = nullptr;
  PrimitiveType type = PrimitiveType::kF32;
  std::vector<int64_t> dims;
  std::vector<CallBuffer> elements;

  bool IsArray() const { return kind == Kind::kArray; }
  bool IsTuple() const { return kind == Kind::kTuple; }
  int64_t ElementCount() const;
  int64_t Bytes() const;
  // "f32[2,3]", "(f32[4], s32[])", "token[]".
  std::string ToString() const;
  // Same kind, types and dimensions throughout.
  bool SameShape(const CallBuffer& other) const;
};

// One call: where the operands are, where the result goes (every array of
// it is the target's to write), and the instruction's backend_config.
struct CallFrame {
  std::string target;  // custom_call_target
  std::string call;    // the instruction's name, for messages
  std::vector<CallBuffer> operands;
  CallBuffer result;
  std::string opaque;
  // The instruction's api_version, when it gives one.
  std::optional<CustomCallApi> api;
};

// A target on a call frame. Throw CustomCallError to fail.
using FrameTarget = std::function<void(const CallFrame&)>;

struct CustomCallTarget {
  std::string name;
  void* c_function = nullptr;  // a C target, called with `api`
  CustomCallApi api = CustomCallApi::kStatusReturning;
  FrameTarget frame_function;  // or a target on call frames
};

// Registers (or replaces) a target. Thread-safe.
void RegisterCustomCallTarget(const std::string& name, void* c_function, CustomCallApi api);
void RegisterCustomCallTarget(const std::string& name, FrameTarget fn);
// Removes a target; false if none had that name.
bool UnregisterCustomCallTarget(const std::string& name);
// The target registered under `name`, or null.
std::shared_ptr<const CustomCallTarget> FindCustomCallTarget(std::string_view name);
// Every registered name, sorted; built-in targets included.
std::vector<std::string> CustomCallTargetNames();

// Runs `frame` through the target registered as frame.target. Throws
// CustomCallError when none is registered or the target fails; what the
// result buffers then hold is unspecified.
void RunCustomCall(const CallFrame& frame);

}  // namespace uir

#endif  // UIR_SUPPORT_CUSTOM_CALL_H_
