// GEMM on OpenBLAS's cblas_sgemm/cblas_dgemm.
#include "runtime/gemm.h"

#include <cblas.h>

#include <climits>
#include <mutex>

#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

blasint Int(int64_t v) {
  UIR_CHECK(v <= INT_MAX) << "matrix dimension " << v << " exceeds BLAS's int";
  return static_cast<blasint>(v);
}

// Multiply-adds per product at or under which a batch is spread over the
// workers, one product per worker at a time, rather than each product
// over BLAS's threads.
constexpr int64_t kSmallGemm = int64_t{1} << 22;

void RunGemmBatches(const GemmPlan& p, const void* a, const void* b, void* c) {
  const CBLAS_TRANSPOSE ta = p.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = p.trans_b ? CblasTrans : CblasNoTrans;
  const blasint lda = Int(p.lda ? p.lda : p.trans_a ? p.m : p.k);
  const blasint ldb = Int(p.ldb ? p.ldb : p.trans_b ? p.k : p.n);
  const blasint ldc = Int(p.ldc ? p.ldc : p.n);
  for (int64_t i = 0; i < p.batch; ++i) {
    if (p.f64) {
      cblas_dgemm(CblasRowMajor, ta, tb, Int(p.m), Int(p.n), Int(p.k), 1.0,
                  static_cast<const double*>(a) + i * p.a_batch_stride, lda,
                  static_cast<const double*>(b) + i * p.b_batch_stride, ldb, 0.0,
                  static_cast<double*>(c) + i * p.c_batch_stride, ldc);
    } else {
      cblas_sgemm(CblasRowMajor, ta, tb, Int(p.m), Int(p.n), Int(p.k), 1.0f,
                  static_cast<const float*>(a) + i * p.a_batch_stride, lda,
                  static_cast<const float*>(b) + i * p.b_batch_stride, ldb, 0.0f,
                  static_cast<float*>(c) + i * p.c_batch_stride, ldc);
    }
  }
}

}  // namespace

void RunGemm(const GemmPlan& p, const void* a, const void* b, void* c) {
  // Several small products, or a batch the workers share evenly: one
  // product per worker at a time, each on one BLAS thread (BLAS splits a
  // product this small poorly; 32 of 128x128x128 measured 0.91 ms one after
  // another on 2 threads; attention's 8 heads of 512x512x64 ran at 25
  // GFLOP/s each split over the threads, near one core's peak each whole).
  const int64_t workers = NumThreads();
  const bool even = p.batch % workers == 0 || p.batch >= 4 * workers;
  if (p.batch >= 2 && workers > 1 && (p.m * p.n * p.k <= kSmallGemm || even)) {
    SingleThreadedGemm scope;
    ParallelFor(p.batch, 1, [&](int64_t begin, int64_t end) {
      GemmPlan part = p;
      part.batch = end - begin;
      const int64_t element = p.f64 ? 8 : 4;
      RunGemmBatches(part, static_cast<const uint8_t*>(a) + begin * p.a_batch_stride * element,
                     static_cast<const uint8_t*>(b) + begin * p.b_batch_stride * element,
                     static_cast<uint8_t*>(c) + begin * p.c_batch_stride * element);
    });
    return;
  }
  if (p.m * p.n * p.k <= kSmallGemm) {
    // One small product on the calling thread: handing it to BLAS's
    // threads costs more than it saves, and on a loaded machine a woken
    // BLAS thread may wait a scheduler slice (a 32x128x128 product took
    // 6-8 ms that way beside other work; 0.02 ms on one thread).
    SingleThreadedGemm scope;
    RunGemmBatches(p, a, b, c);
    return;
  }
  RunGemmBatches(p, a, b, c);
}

std::string BlasCore() {
  const char* name = openblas_get_corename();
  return name != nullptr ? name : "";
}

namespace {

std::mutex scope_mutex;
int scopes = 0;
int saved_threads = 1;
}  // namespace

SingleThreadedGemm::SingleThreadedGemm() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  if (scopes++ == 0) {
    saved_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
}

SingleThreadedGemm::~SingleThreadedGemm() {
  std::lock_guard<std::mutex> lock(scope_mutex);
  if (--scopes == 0) openblas_set_num_threads(saved_threads);
}

}  // namespace uir::runtime
