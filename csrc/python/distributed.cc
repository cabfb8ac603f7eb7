// The `distributed` submodule: MPI's world for runs across processes
// (runtime/mpi_communicator.h), as uir.distributed uses it.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "python/bindings.h"
#include "runtime/mpi_communicator.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {

void BindDistributed(py::module_& m) {
  py::module_ dm = m.def_submodule("distributed", "Runs across processes through MPI.");
  dm.def("built", &runtime::MpiBuilt, "Whether this build has MPI.");
  dm.def("library_version", &runtime::MpiLibraryVersion,
         "The MPI library's version line; empty without MPI.");
  dm.def(
      "initialize",
      [] {
        runtime::MpiWorldInfo info;
        {
          py::gil_scoped_release release;
          info = runtime::MpiInitialize();
        }
        return py::make_tuple(info.rank, info.size);
      },
      "Initializes MPI (MPI_THREAD_MULTIPLE) once; returns (rank, size).");
  dm.def("initialized", &runtime::MpiInitialized);
  dm.def(
      "finalize",
      [] {
        py::gil_scoped_release release;
        runtime::MpiFinalize();
      },
      "A barrier across the processes (failing if one failed), then MPI_Finalize.");
  dm.def(
      "barrier",
      [] {
        py::gil_scoped_release release;
        runtime::MpiBarrier();
      },
      "Waits for every process; raises DistributedError when another failed.");
  dm.def(
      "report_failure",
      [](const std::string& message) {
        py::gil_scoped_release release;
        runtime::MpiReportFailure(message);
      },
      py::arg("message"), "Tells every other process that this one failed with `message`.");
  dm.def(
      "allreduce_seconds",
      [](py::array_t<float, py::array::c_style> in, py::array_t<float, py::array::c_style> out,
         int iterations) {
        if (!out.writeable()) throw py::value_error("allreduce_seconds writes `out`");
        if (in.size() != out.size()) throw py::value_error("`in` and `out` differ in size");
        const float* from = in.data();
        float* to = out.mutable_data();
        const int64_t n = out.size();
        py::gil_scoped_release release;
        return runtime::MpiAllreduceSeconds(from, to, n, iterations);
      },
      py::arg("in"), py::arg("out"), py::arg("iterations"),
      "Seconds per MPI_Allreduce (sum) of a float32 array across the processes, from `in` "
      "into `out` (in place when they are the same array): the baseline for uir's own.");
}

}  // namespace uir::python
