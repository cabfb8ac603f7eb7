// The LAPACK custom calls JAX's CPU lowering emits (`lapack_sgetrf_ffi`,
// `lapack_zheevd_ffi`, ...), as built-in targets run by OpenBLAS's LAPACK.
//
// JAX lowers jnp.linalg and lax.linalg on CPU to typed-FFI custom calls
// whose operands and results are batches of column-major matrices
// (operand_layout_constraints {n-2, n-1, n-3, ..., 0}) and whose
// backend_config is a dictionary of attributes (`{uplo = 76 : ui8}`: the
// LAPACK character 'L'). A call frame holds every array row-major in its
// logical shape whatever its layout, so each target lays the matrices of a
// batch out column-major for LAPACK and back. Results follow jaxlib's
// kernels: the factored matrix where LAPACK leaves it, LAPACK's 1-based
// pivots, and an s32 `info` per matrix that the HLO around the call turns
// into NaNs.
#ifndef UIR_RUNTIME_LAPACK_TARGETS_H_
#define UIR_RUNTIME_LAPACK_TARGETS_H_

#include <string>
#include <utility>
#include <vector>

#include "support/custom_call.h"

namespace uir::runtime {

// Every LAPACK target, by name: getrf, potrf, geqrf, geqp3, orgqr/ungqr,
// ormqr/unmqr, syevd/heevd, gesdd, gesvd, trsm, geev, gees, gehrd,
// sytrd/hetrd and gtsv, each for s, d, c and z.
std::vector<std::pair<std::string, FrameTarget>> LapackTargets();

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_LAPACK_TARGETS_H_
