// Bindings for the runtime: the worker thread pool.
#include <pybind11/pybind11.h>

#include <atomic>

#include "python/bindings.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {

void BindRuntime(py::module_& m) {
  py::module_ sm = m.def_submodule("runtime", "Thread pool, executor and buffers.");
  sm.def("num_threads", &runtime::NumThreads,
         "Worker threads kernels run on: UIR_NUM_THREADS, else the CPUs available.");
  sm.def(
      "parallel_sum_for_testing",
      [](int64_t n, int64_t grain, int64_t throw_at) {
        // Sums 0..n-1 through ParallelFor, so tests can check that every index
        // is visited exactly once and that a chunk's exception reaches the caller.
        std::atomic<int64_t> sum{0};
        py::gil_scoped_release release;
        runtime::ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) {
            UIR_CHECK(i != throw_at) << "chunk [" << begin << ", " << end << ") reached " << i;
            local += i;
          }
          sum += local;
        });
        return sum.load();
      },
      py::arg("n"), py::arg("grain"), py::arg("throw_at") = -1,
      "Sum of 0..n-1 computed by ParallelFor; raises InternalError at index `throw_at`.");
}

}  // namespace uir::python
