/* uir's C interface for custom-call targets.
 *
 * A target is a C function registered under the name a `custom-call`
 * instruction gives as custom_call_target:
 *
 *   uir.custom_call.register("my_target", ctypes_function, api="status")
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
 * with status->set_failure(status, message, length); the call then raises
 * uir.CustomCallError with that message.
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

#ifdef __cplusplus
}
#endif

#endif /* UIR_CUSTOM_CALL_H_ */
