/* uir's C interface for custom-call targets.
 *
 * A target is a C function registered under the name a `custom-call`
 * instruction gives as custom_call_target, from Python:
 *
 *   uir.custom_call.register("my_target", ctypes_function, api="status")
 *
 * or from C or C++, in a shared library that uir loads:
 *
 *   UIR_REGISTER_CUSTOM_CALL_TARGET("my_target", my_function, UIR_API_STATUS);
 *   ...
 *   uir.custom_call.load_library("libmine.so")   # registers what it declares
 *
 * Buffers are row-major in the instruction's shapes. `out` is the result
 * buffer, or for a tuple result an array of pointers to each element's
 * buffer; `in[i]` is operand i's buffer (for a tuple operand, an array of
 * pointers to its elements' buffers).
 *
 *   api="original":        void f(void* out, const void** in);
 *   api="status":          void f(void* out, const void** in, UirCustomCallStatus* status);
 *   api="status_unified":  void f(void* out, const void** in, const char* opaque,
 *                                 size_t opaque_len, UirCustomCallStatus* status);
 *
 * `opaque` is the instruction's backend_config. A target reports failure
 * with status->set_failure(status, message, length) (or
 * UirCustomCallStatusSetFailure); the call then raises uir.CustomCallError
 * with that message and its results are discarded.
 *
 * XLA's spellings are here too, so that a target written for XLA's legacy
 * CPU API compiles with its two XLA includes
 * ("xla/service/custom_call_status.h",
 * "xla/service/custom_call_target_registry.h") replaced by this one:
 * XlaCustomCallStatus, XlaCustomCallStatusSetFailure,
 * XlaCustomCallStatusSetSuccess, XLA_REGISTER_CUSTOM_CALL_TARGET(fn,
 * platform), XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(name, fn, platform),
 * XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(fn) and
 * XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(name, fn). As in XLA, such a
 * target is called in the convention its instruction's api_version names
 * (API_VERSION_ORIGINAL when it names none), and only platform "Host"
 * registrations are taken. XLA's typed FFI (API_VERSION_TYPED_FFI) is not
 * a C convention uir runs.
 */
#ifndef UIR_CUSTOM_CALL_H_
#define UIR_CUSTOM_CALL_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct UirCustomCallStatus UirCustomCallStatus;
struct UirCustomCallStatus {
  void (*set_failure)(UirCustomCallStatus* status, const char* message, size_t length);
  /* Further members are private to uir. */
};

static inline void UirCustomCallStatusSetFailure(UirCustomCallStatus* status, const char* message,
                                                 size_t length) {
  status->set_failure(status, message, length);
}

/* --- Registration ------------------------------------------------------- */

/* The calling conventions, as the api argument of the macros below. */
enum {
  UIR_API_FROM_INSTRUCTION = 0, /* the instruction's api_version (XLA's macros) */
  UIR_API_ORIGINAL = 1,
  UIR_API_STATUS = 2,
  UIR_API_STATUS_UNIFIED = 3
};

/* One registration; the macros below build them. */
typedef struct UirCustomCallRegistration UirCustomCallRegistration;
struct UirCustomCallRegistration {
  const char* name;
  void* function;
  int api;
  const char* platform; /* "Host": run by uir; anything else is ignored */
  const UirCustomCallRegistration* next;
};

/* This shared library's registrations, most recent first: a list each
 * registration joins when the library is loaded, which uir reads through
 * uir_custom_call_registrations() (uir.custom_call.load_library). One list
 * per library: the head is hidden, the reader exported. */
__attribute__((weak, visibility("hidden"))) const UirCustomCallRegistration*
    uir_custom_call_registration_head_;

__attribute__((weak, visibility("default"))) const UirCustomCallRegistration*
uir_custom_call_registrations(void) {
  return uir_custom_call_registration_head_;
}

#define UIR_CUSTOM_CALL_CAT2_(a, b) a##b
#define UIR_CUSTOM_CALL_CAT_(a, b) UIR_CUSTOM_CALL_CAT2_(a, b)
#define UIR_CUSTOM_CALL_REGISTER_AT_(id, name, fn, api, platform)                            \
  static UirCustomCallRegistration UIR_CUSTOM_CALL_CAT_(uir_custom_call_registration_, id) = { \
      name, (void*)(fn), api, platform, 0};                                                   \
  __attribute__((constructor)) static void UIR_CUSTOM_CALL_CAT_(uir_custom_call_register_,   \
                                                                id)(void) {                   \
    UIR_CUSTOM_CALL_CAT_(uir_custom_call_registration_, id).next =                           \
        uir_custom_call_registration_head_;                                                   \
    uir_custom_call_registration_head_ =                                                      \
        &UIR_CUSTOM_CALL_CAT_(uir_custom_call_registration_, id);                             \
  }

/* Registers C function `fn` as target `name` (a string) in convention
 * `api` (UIR_API_ORIGINAL, UIR_API_STATUS, UIR_API_STATUS_UNIFIED, or
 * UIR_API_FROM_INSTRUCTION), at file scope. */
#define UIR_REGISTER_CUSTOM_CALL_TARGET(name, fn, api) \
  UIR_CUSTOM_CALL_REGISTER_AT_(__COUNTER__, name, fn, api, "Host")

/* --- XLA's spellings ---------------------------------------------------- */

typedef UirCustomCallStatus XlaCustomCallStatus;

static inline void XlaCustomCallStatusSetFailure(XlaCustomCallStatus* status, const char* message,
                                                 size_t message_len) {
  status->set_failure(status, message, message_len);
}

/* A status is a success unless set to a failure. */
static inline void XlaCustomCallStatusSetSuccess(XlaCustomCallStatus* status) { (void)status; }

#define XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, fn, platform) \
  UIR_CUSTOM_CALL_REGISTER_AT_(__COUNTER__, symbol, fn, UIR_API_FROM_INSTRUCTION, platform)
#define XLA_REGISTER_CUSTOM_CALL_TARGET(fn, platform) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(#fn, fn, platform)
#define XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, fn) \
  XLA_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(symbol, fn, "Host")
#define XLA_CPU_REGISTER_CUSTOM_CALL_TARGET(fn) XLA_CPU_REGISTER_CUSTOM_CALL_TARGET_WITH_SYM(#fn, fn)

#ifdef __cplusplus
}

namespace xla {
using ::XlaCustomCallStatus;
}  // namespace xla
#endif

#endif /* UIR_CUSTOM_CALL_H_ */
