// Bindings for the pass framework: the registry, pipelines (with Python
// passes beside C++ ones) and the per-pass observer.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "passes/fusion/priority_fusion.h"
#include "passes/layout_assignment.h"
#include "pipeline/registry.h"
#include "python/bindings.h"
#include "python/hlo_types.h"
#include "support/machine.h"

namespace py = pybind11;

namespace uir::python {
namespace {

// The module a pipeline is running on, for Python passes (which need the
// shared pointer the Python views hold).
thread_local ModulePtr running_module;

// A pass written in Python: fn(module) -> bool changed.
class PythonPass : public passes::HloPass {
 public:
  PythonPass(std::string name, py::function fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  ~PythonPass() override {
    py::gil_scoped_acquire gil;
    fn_ = py::function();
  }
  std::string_view name() const override { return name_; }
  bool Run(hlo::HloModule& module) override {
    py::gil_scoped_acquire gil;
    if (running_module.get() != &module) {
      throw std::invalid_argument("Python pass '" + name_ + "' run outside Pipeline.run");
    }
    return fn_(running_module).cast<bool>();
  }

 private:
  std::string name_;
  py::function fn_;
};

using PipelinePtr = std::shared_ptr<passes::HloPassPipeline>;

py::dict RecordToPython(const passes::PassRecord& r) {
  py::dict d;
  d["name"] = r.name;
  d["pipeline"] = r.pipeline;
  d["iteration"] = r.iteration;
  d["changed"] = r.changed;
  d["seconds"] = r.seconds;
  d["instruction_count"] = r.instruction_count;
  return d;
}

MachineModel MachineByName(const std::string& name) {
  if (name == "host") return MachineModel::Host();
  if (name == "reference") return MachineModel::Reference();
  throw std::invalid_argument("unknown machine '" + name + "'; use 'host' or 'reference'");
}

py::dict MachineToPython(const MachineModel& m) {
  py::dict d;
  d["cores"] = m.cores;
  d["vector_bytes"] = m.vector_bytes;
  d["l1_bytes"] = m.l1_bytes;
  d["l2_bytes"] = m.l2_bytes;
  d["dram_bytes_per_s"] = m.dram_bytes_per_s;
  d["cache_bytes_per_s"] = m.cache_bytes_per_s;
  d["flops_per_s"] = m.flops_per_s;
  d["kernel_overhead_s"] = m.kernel_overhead_s;
  d["fast_memory_bytes"] = m.fast_memory_bytes();
  d["cache_resident_bytes"] = m.cache_resident_bytes();
  d["flops_per_byte"] = m.flops_per_byte();
  d["text"] = m.ToString();
  return d;
}

py::dict DecisionToPython(const passes::FusionDecision& d) {
  py::dict out;
  out["computation"] = d.computation;
  out["producer"] = d.producer;
  out["producer_op"] = d.producer_op;
  out["consumers"] = d.consumers;
  out["fused"] = d.fused;
  out["result"] = d.result;
  out["kind"] = d.kind;
  out["rule"] = d.rule;
  out["bytes_saved"] = d.bytes_saved;
  out["flops_duplicated"] = d.flops_duplicated;
  out["seconds_unfused"] = d.seconds_unfused;
  out["seconds_fused"] = d.seconds_fused;
  return out;
}

}  // namespace

void BindPasses(py::module_& m) {
  py::module_ sm = m.def_submodule("passes", "The HLO pass framework and its passes.");
  sm.def("available", &pipeline::AvailablePasses, "Every registered pass name, sorted.");

  py::class_<passes::HloPassPipeline, PipelinePtr>(sm, "Pipeline")
      .def_property_readonly("name",
                             [](const passes::HloPassPipeline& p) { return std::string(p.name()); })
      .def_property_readonly("names", &passes::HloPassPipeline::LeafNames,
                             "Every pass in running order (a fixed point's passes once).")
      .def(
          "run",
          [](passes::HloPassPipeline& p, const ModulePtr& module, bool verify, bool check_unchanged,
             const std::optional<py::function>& observer) {
            passes::PipelineOptions options;
            options.verify = verify;
            options.check_unchanged = check_unchanged;
            if (observer) {
              py::function fn = *observer;
              options.observer = [fn, module](const passes::PassRecord& r, const hlo::HloModule&) {
                py::gil_scoped_acquire gil;
                fn(RecordToPython(r), module);
              };
            }
            ModulePtr previous = running_module;
            running_module = module;
            bool changed = false;
            try {
              py::gil_scoped_release release;
              changed = p.Run(*module, options);
            } catch (...) {
              running_module = previous;
              throw;
            }
            running_module = previous;
            return changed;
          },
          py::arg("module"), py::arg("verify") = true, py::arg("check_unchanged") = true,
          py::arg("observer") = py::none(),
          "Runs the pipeline on `module` in place; returns whether it changed. "
          "observer(record, module) is called after every pass.");

  sm.def(
      "make_pipeline",
      [](const py::list& items) {
        auto p = std::make_shared<passes::HloPassPipeline>("passes");
        for (const py::handle& item : items) {
          if (py::isinstance<py::str>(item)) {
            p->AddPass(pipeline::CreatePass(item.cast<std::string>()));
          } else {
            auto [name, fn] = item.cast<std::pair<std::string, py::function>>();
            p->AddPass(std::make_unique<PythonPass>(name, fn));
          }
        }
        return p;
      },
      py::arg("passes"),
      "A pipeline of registered pass names and (name, fn) Python passes, in order.");
  sm.def(
      "machine_model", [](const std::string& name) { return MachineToPython(MachineByName(name)); },
      py::arg("name") = "host",
      "The cost model's machine: 'host' (this machine) or 'reference' (machine-limits.md).");
  sm.def(
      "priority_fusion_decisions",
      [](const ModulePtr& module, const std::string& machine) {
        passes::PriorityFusion pass(MachineByName(machine));
        {
          py::gil_scoped_release release;
          pass.Run(*module);
          module->Cleanup();
        }
        py::list out;
        for (const passes::FusionDecision& d : pass.decisions()) out.append(DecisionToPython(d));
        return out;
      },
      py::arg("module"), py::arg("machine") = "host",
      "Runs priority-fusion on `module` in place; returns its decisions as dicts.");
  sm.def(
      "layout_problems", [](const ModulePtr& m) { return passes::LayoutProblems(*m); },
      py::arg("module"), "Where the module breaks layout-assignment's rules (empty once it ran).");
  sm.def(
      "simplification_pipeline", [] { return PipelinePtr(pipeline::SimplificationPipeline()); },
      "The default pipeline's passes before fusion.");
  sm.def(
      "default_pipeline", [] { return PipelinePtr(pipeline::DefaultPipeline()); },
      "The default optimization pipeline.");
}

}  // namespace uir::python
