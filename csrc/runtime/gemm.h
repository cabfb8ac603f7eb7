// The library GEMM: a (batched) matrix product on BLAS, described by
// numbers only (the Kernel Graph plans it from a dot).
#ifndef UIR_RUNTIME_GEMM_H_
#define UIR_RUNTIME_GEMM_H_

#include <cstdint>
#include <string>

namespace uir::runtime {

// For each batch b: C_b[m x n] = op(A_b) * op(B_b), all row-major. A_b is
// stored [m x k] (or [k x m] when trans_a), B_b [k x n] (or [n x k] when
// trans_b); batches are *_batch_stride elements apart.
struct GemmPlan {
  bool f64 = false;  // double, else float
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool trans_a = false, trans_b = false;
  int64_t a_batch_stride = 0, b_batch_stride = 0, c_batch_stride = 0;
  // Elements between rows as stored; 0: packed (the stored row length).
  int64_t lda = 0, ldb = 0, ldc = 0;
};

void RunGemm(const GemmPlan& plan, const void* a, const void* b, void* c);

// The BLAS library's kernel family for this CPU ("SkylakeX", "Haswell").
std::string BlasCore();

// While one lives, GEMMs run on the thread that calls them: for callers
// that spread many small GEMMs over the worker threads themselves. Scopes
// nest; the library's own threading returns when the last one ends.
class SingleThreadedGemm {
 public:
  SingleThreadedGemm();
  ~SingleThreadedGemm();
  SingleThreadedGemm(const SingleThreadedGemm&) = delete;
  SingleThreadedGemm& operator=(const SingleThreadedGemm&) = delete;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_GEMM_H_
