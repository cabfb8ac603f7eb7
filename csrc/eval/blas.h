// The evaluator's use of BLAS: row-major products in double and complex
// double. Kept behind this header so only one file sees cblas.h.
#ifndef UIR_EVAL_BLAS_H_
#define UIR_EVAL_BLAS_H_

#include <complex>
#include <cstdint>

namespace uir::eval {

// c[m x n] = a[m x k] * b^T, where b is [n x k] (each of a's rows dotted
// with each of b's rows); all row-major and contiguous.
void GemmABt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);
void GemmABt(int64_t m, int64_t n, int64_t k, const std::complex<double>* a,
             const std::complex<double>* b, std::complex<double>* c);

// c[m x n] = a[m x k] * b[k x n].
void GemmAB(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);
void GemmAB(int64_t m, int64_t n, int64_t k, const std::complex<double>* a,
            const std::complex<double>* b, std::complex<double>* c);

// Products smaller than this many multiply-adds run as plain loops.
constexpr int64_t kMinBlasWork = 1 << 15;

}  // namespace uir::eval

#endif  // UIR_EVAL_BLAS_H_
