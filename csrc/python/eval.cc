// Bindings for the reference evaluator.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "eval/evaluator.h"
#include "python/bindings.h"
#include "python/hlo_types.h"

namespace py = pybind11;

namespace uir::python {

void BindEval(py::module_& m) {
  py::module_ sm = m.def_submodule("eval", "The reference evaluator.");
  sm.def(
      "evaluate",
      [](const ModulePtr& module, const py::list& arrays) {
        std::vector<hlo::Literal> args;
        for (const py::handle& a : arrays) args.push_back(NumpyToLiteral(a));
        hlo::Literal result;
        {
          py::gil_scoped_release release;
          result = eval::Evaluate(*module, args);
        }
        return LiteralToPython(result);
      },
      py::arg("module"), py::arg("arrays"),
      "Runs the module's entry computation on NumPy arrays; tuple results come back as tuples.");
}

}  // namespace uir::python
