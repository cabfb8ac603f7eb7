// Running compiled executables on Python arguments: one run, and every
// participant of a replicated executable in this process or this process's
// participant of a run across processes.
#ifndef UIR_PYTHON_EXECUTABLE_RUN_H_
#define UIR_PYTHON_EXECUTABLE_RUN_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "buffers/buffer_assignment.h"
#include "codegen/cpu_executable.h"
#include "igraph/kernel_graph.h"
#include "python/hlo_types.h"

namespace uir::runtime {
class Profiler;
class Communicator;
}  // namespace uir::runtime

namespace uir::python {

// A Kernel Graph keeps its module and buffer assignment alive.
struct PyKernelGraph {
  ModulePtr module;
  std::shared_ptr<buffers::BufferAssignment> ba;
  std::shared_ptr<igraph::KernelGraph> graph;
};

// A compiled Kernel Graph keeps the graph (and so its module) alive.
struct PyCpuExecutable {
  std::shared_ptr<PyKernelGraph> owner;
  std::unique_ptr<codegen::CpuExecutable> exe;
  // NumPy dtypes of the parameter and result leaves, made at the first run.
  mutable std::vector<pybind11::dtype> param_dtypes, result_dtypes;
};

// Runs `e` on Python arguments: arrays are read in place, results are
// fresh NumPy arrays the executable writes directly; the arrays at the
// positions in `donated` may be written over. As `communicator`'s
// participant when given.
pybind11::object RunExecutable(const PyCpuExecutable& e, const pybind11::list& args,
                               const std::vector<int64_t>& donated,
                               runtime::Profiler* profiler = nullptr,
                               runtime::Communicator* communicator = nullptr);

// Runs every participant of a replicated executable in this process, one
// thread each, participant i on per_participant[i]; returns their results.
// When any fails, raises the error of the first that failed of itself
// (the others' DistributedErrors only echo it).
pybind11::list RunParticipants(const PyCpuExecutable& e, const pybind11::list& per_participant);

// Runs this process's participant of an executable run across processes
// (MPI, runtime/mpi_communicator.h): participant = this process's rank.
pybind11::object RunDistributed(const PyCpuExecutable& e, const pybind11::list& args);

}  // namespace uir::python

#endif  // UIR_PYTHON_EXECUTABLE_RUN_H_
