// The custom-call registry: the host functions that `custom-call`
// instructions name by custom_call_target. The evaluator runs them; the CPU
// executor will run the same targets.
//
// A target is either a C function with one of XLA's CPU calling conventions
// (see uir/include/uir/custom_call.h) or a C++ function on literals (the
// built-in targets, and Python callables through the bindings).
#ifndef UIR_RUNTIME_CUSTOM_CALL_H_
#define UIR_RUNTIME_CUSTOM_CALL_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"

namespace uir::runtime {

enum class CustomCallApi {
  kOriginal,                // void f(void* out, const void** in)
  kStatusReturning,         // ... , UirCustomCallStatus* status)
  kStatusReturningUnified,  // ... , const char* opaque, size_t opaque_len, status)
};

// Runs a call on literals: `result` arrives zero-filled in the instruction's
// shape and is filled by the target. Throw CustomCallError to fail.
using LiteralTarget =
    std::function<void(const hlo::HloInstruction& call,
                       const std::vector<const hlo::Literal*>& operands, hlo::Literal& result)>;

struct CustomCallTarget {
  std::string name;
  void* c_function = nullptr;  // a C target, called with `api`
  CustomCallApi api = CustomCallApi::kStatusReturning;
  LiteralTarget literal_function;  // or a target on literals
  bool builtin = false;
};

// Registers (or replaces) a target. Thread-safe.
void RegisterCustomCallTarget(const std::string& name, void* c_function, CustomCallApi api);
void RegisterCustomCallTarget(const std::string& name, LiteralTarget fn);
// Removes a target; false if none had that name.
bool UnregisterCustomCallTarget(const std::string& name);
// The target registered under `name`, or null.
std::shared_ptr<const CustomCallTarget> FindCustomCallTarget(std::string_view name);
// Every registered name, sorted; built-in targets included.
std::vector<std::string> CustomCallTargetNames();

// Runs custom-call `call` on `operands` through its target. Throws
// CustomCallError when no target is registered or the target fails.
hlo::Literal RunCustomCall(const hlo::HloInstruction& call,
                           const std::vector<const hlo::Literal*>& operands);

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_CUSTOM_CALL_H_
