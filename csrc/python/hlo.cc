// Bindings for the HLO IR: modules, computations, instructions and shapes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "python/bindings.h"

namespace py = pybind11;

namespace uir::python {

void BindHlo(py::module_& m) {
  py::module_ sm = m.def_submodule("hlo", "XLA's HLO: parse, print, verify, inspect.");
  py::class_<hlo::HloModule, std::shared_ptr<hlo::HloModule>>(sm, "HloModule")
      .def_property_readonly("name", &hlo::HloModule::name)
      .def("to_text", [](const hlo::HloModule& mod) { return hlo::PrintModule(mod); })
      .def("__eq__", [](const hlo::HloModule& a, const hlo::HloModule& b) { return a.Equals(b); });
  sm.def(
      "parse_module",
      [](const std::string& text, const std::string& file) {
        std::unique_ptr<hlo::HloModule> module;
        {
          py::gil_scoped_release release;
          module = hlo::ParseModule(text, hlo::ParseOptions{file});
        }
        return std::shared_ptr<hlo::HloModule>(std::move(module));
      },
      py::arg("text"), py::arg("file") = "");
}

}  // namespace uir::python
