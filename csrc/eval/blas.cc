// BLAS calls for the evaluator (OpenBLAS's CBLAS interface).
#include "eval/blas.h"

#include <cblas.h>

#include <climits>

#include "support/error.h"

namespace uir::eval {
namespace {

blasint Int(int64_t v) {
  UIR_CHECK(v >= 0 && v <= INT_MAX) << "matrix dimension " << v << " is too large for BLAS";
  return static_cast<blasint>(v);
}

}  // namespace

void GemmABt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int(m), Int(n), Int(k), 1.0, a,
              Int(std::max<int64_t>(k, 1)), b, Int(std::max<int64_t>(k, 1)), 0.0, c, Int(n));
}

void GemmABt(int64_t m, int64_t n, int64_t k, const std::complex<double>* a,
             const std::complex<double>* b, std::complex<double>* c) {
  if (m == 0 || n == 0) return;
  const std::complex<double> one(1, 0), zero(0, 0);
  cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int(m), Int(n), Int(k), &one, a,
              Int(std::max<int64_t>(k, 1)), b, Int(std::max<int64_t>(k, 1)), &zero, c, Int(n));
}

void GemmAB(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int(m), Int(n), Int(k), 1.0, a,
              Int(std::max<int64_t>(k, 1)), b, Int(n), 0.0, c, Int(n));
}

void GemmAB(int64_t m, int64_t n, int64_t k, const std::complex<double>* a,
            const std::complex<double>* b, std::complex<double>* c) {
  if (m == 0 || n == 0) return;
  const std::complex<double> one(1, 0), zero(0, 0);
  cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int(m), Int(n), Int(k), &one, a,
              Int(std::max<int64_t>(k, 1)), b, Int(n), &zero, c, Int(n));
}

}  // namespace uir::eval
