// The Bind<Area> functions that module.cc calls, one per file of this folder.
#ifndef UIR_PYTHON_BINDINGS_H_
#define UIR_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace uir::python {

void BindSupport(pybind11::module_& m);      // error translation; `support` submodule
void BindHlo(pybind11::module_& m);          // `hlo` submodule
void BindEval(pybind11::module_& m);         // `eval` submodule
void BindPasses(pybind11::module_& m);       // `passes` submodule
void BindRuntime(pybind11::module_& m);      // `runtime` submodule
void BindCodegen(pybind11::module_& m);      // `codegen` submodule
void BindBuffers(pybind11::module_& m);      // `schedule` and `buffers` submodules
void BindIGraph(pybind11::module_& m);       // `igraph` submodule
void BindDistributed(pybind11::module_& m);  // `distributed` submodule

}  // namespace uir::python

#endif  // UIR_PYTHON_BINDINGS_H_
