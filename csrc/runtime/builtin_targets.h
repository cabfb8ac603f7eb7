// The custom-call targets the runtime ships: what a single host makes of
// the custom calls XLA's own pipelines emit (sharding and offloading marks
// pass through, dynamic-shape markers, AllocateBuffer, TopK) and the LAPACK
// targets of jaxlib (lapack_targets.h), registered in the process-wide
// registry of support/custom_call.h.
#ifndef UIR_RUNTIME_BUILTIN_TARGETS_H_
#define UIR_RUNTIME_BUILTIN_TARGETS_H_

namespace uir::runtime {

// Registers every built-in target (once per process; later calls do
// nothing). The Python extension calls it when it loads.
void RegisterBuiltinTargets();

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_BUILTIN_TARGETS_H_
