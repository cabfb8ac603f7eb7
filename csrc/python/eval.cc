// Bindings for the reference evaluator.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "eval/collectives.h"
#include "eval/evaluator.h"
#include "python/bindings.h"
#include "python/hlo_types.h"

namespace py = pybind11;

namespace uir::python {

hlo::Literal ToArgument(const py::handle& value) {
  if (py::isinstance<py::tuple>(value)) {
    std::vector<hlo::Literal> elements;
    std::vector<hlo::Shape> shapes;
    for (const py::handle& e : value.cast<py::tuple>()) {
      elements.push_back(ToArgument(e));
      shapes.push_back(elements.back().shape());
    }
    hlo::Literal out(hlo::Shape::Tuple(std::move(shapes)));
    out.mutable_tuple_elements() = std::move(elements);
    return out;
  }
  return NumpyToLiteral(value, /*allow_view=*/true);
}

void BindEval(py::module_& m) {
  py::module_ sm = m.def_submodule("eval", "The reference evaluator.");
  sm.def(
      "evaluate",
      [](const ModulePtr& module, const py::list& arrays, int replicas,
         uint64_t seed) -> py::object {
        std::vector<hlo::Literal> args;
        for (const py::handle& a : arrays) args.push_back(ToArgument(a));
        if (replicas == 1) {
          hlo::Literal result;
          {
            py::gil_scoped_release release;
            result = eval::Evaluate(*module, args, seed);
          }
          return LiteralToPython(result);
        }
        std::vector<hlo::Literal> results;
        {
          py::gil_scoped_release release;
          results = eval::EvaluateReplicated(*module, args, replicas, seed);
        }
        py::list out;
        for (const hlo::Literal& r : results) out.append(LiteralToPython(r));
        return out;
      },
      py::arg("module"), py::arg("arrays"), py::arg("replicas") = 1, py::arg("seed") = 0,
      "Runs the module's entry computation on NumPy arrays; tuple results come back as tuples. "
      "With replicas > 1, runs that many participants and returns a list of their results.");
  sm.def(
      "evaluate_per_participant",
      [](const ModulePtr& module, const py::list& per_participant, uint64_t seed) -> py::list {
        std::vector<std::vector<hlo::Literal>> args;
        for (const py::handle& arrays : per_participant) {
          args.emplace_back();
          for (const py::handle& a : arrays.cast<py::list>()) args.back().push_back(ToArgument(a));
        }
        std::vector<hlo::Literal> results;
        {
          py::gil_scoped_release release;
          results = eval::EvaluateReplicated(*module, args, seed);
        }
        py::list out;
        for (const hlo::Literal& r : results) out.append(LiteralToPython(r));
        return out;
      },
      py::arg("module"), py::arg("per_participant"), py::arg("seed") = 0,
      "Runs one participant per list of arrays in per_participant; returns their results.");
  sm.def(
      "required_replicas",
      [](const ModulePtr& module) { return eval::RequiredParticipants(*module); },
      py::arg("module"),
      "Participants the module's collectives need (replica_count x num_partitions at least).");
}

}  // namespace uir::python
