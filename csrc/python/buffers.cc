// Bindings for scheduling and buffer assignment: `schedule` and `buffers`
// submodules. Functions taking a module work on it in place; the Python
// package runs them on copies.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "buffers/buffer_assignment.h"
#include "python/bindings.h"
#include "python/hlo_types.h"
#include "schedule/latency_hiding.h"
#include "schedule/memory_scheduler.h"
#include "schedule/rematerialization.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

// Keeps the module alive as long as its assignment.
struct PyBufferAssignment {
  ModulePtr module;
  std::unique_ptr<buffers::BufferAssignment> ba;
};

py::dict ReportToPython(const schedule::ScheduleReport& r) {
  py::dict d;
  d["algorithm"] = r.chosen;
  py::dict peaks;
  for (const auto& [name, bytes] : r.peaks) peaks[py::str(name)] = bytes;
  d["peaks"] = peaks;
  d["seconds"] = r.seconds;
  d["text"] = r.ToString();
  return d;
}

py::list AllocationsToPython(const buffers::BufferAssignment& ba) {
  py::list out;
  const analysis::HloLiveRange& lr = ba.liveness();
  for (const buffers::Allocation& a : ba.allocations()) {
    py::dict d;
    d["index"] = a.index;
    d["kind"] = std::string(analysis::BufferKindName(a.kind));
    d["size"] = a.size;
    d["live_out"] = a.live_out;
    d["parameter_number"] = a.parameter_number >= 0 ? py::cast(a.parameter_number) : py::none();
    d["parameter_index"] = py::tuple(py::cast(a.parameter_index));
    py::list slices;
    for (const analysis::HloBuffer* b : a.buffers) {
      const buffers::Slice& s = ba.SliceOf(*b);
      const analysis::LiveRange& r = lr.buffer_range(*b);
      py::dict sd;
      sd["buffer"] = b->id();
      sd["offset"] = s.offset;
      sd["size"] = s.size;
      sd["start"] = r.start;
      sd["end"] = r.end;
      py::list values;
      for (const analysis::HloValue* v : b->values()) {
        py::dict vd;
        vd["id"] = v->id();
        vd["instruction"] = v->instruction()->name();
        vd["index"] = py::tuple(py::cast(v->index()));
        vd["shape"] = v->shape().ToString();
        vd["bytes"] = v->bytes();
        vd["phi"] = v->is_phi();
        const analysis::LiveRange& vr = lr.value_range(*v);
        vd["start"] = vr.start;
        vd["end"] = vr.end;
        values.append(vd);
      }
      sd["values"] = values;
      slices.append(sd);
    }
    d["slices"] = slices;
    out.append(d);
  }
  return out;
}

}  // namespace

void BindBuffers(py::module_& m) {
  py::module_ sm = m.def_submodule("schedule", "Schedulers.");
  sm.def(
      "schedule_module",
      [](const ModulePtr& module, const std::string& algorithm) {
        const schedule::Algorithm a = schedule::AlgorithmByName(algorithm);
        schedule::ScheduleReport report;
        {
          py::gil_scoped_release release;
          report = schedule::ScheduleModule(*module, a);
        }
        return ReportToPython(report);
      },
      py::arg("module"), py::arg("algorithm") = "auto",
      "Schedules `module` in place; returns the report (chosen algorithm, each one's peak).");
  sm.def(
      "latency_hiding",
      [](const ModulePtr& module, int64_t limit, const std::string& machine) {
        if (!module->has_schedule()) {
          throw UserError(ErrorKind::kVerify, "module " + module->name() + " is not scheduled");
        }
        MachineModel m;
        if (machine == "host") {
          m = MachineModel::Host();
        } else if (machine == "reference") {
          m = MachineModel::Reference();
        } else {
          throw std::invalid_argument("unknown machine '" + machine +
                                      "'; use 'host' or 'reference'");
        }
        schedule::LatencyHidingReport r;
        {
          py::gil_scoped_release release;
          r = schedule::ScheduleLatencyHiding(*module, m, limit);
        }
        py::list pairs;
        for (const schedule::AsyncPairReport& p : r.pairs) {
          py::dict d;
          d["start"] = p.start;
          d["done"] = p.done;
          d["latency_s"] = p.latency_s;
          d["overlap_before_s"] = p.overlap_before_s;
          d["overlap_after_s"] = p.overlap_after_s;
          d["between_before"] = p.instructions_between_before;
          d["between_after"] = p.instructions_between_after;
          pairs.append(d);
        }
        py::dict d;
        d["pairs"] = pairs;
        d["peak_before"] = r.peak_before;
        d["peak_after"] = r.peak_after;
        d["text"] = r.ToString();
        return d;
      },
      py::arg("module"), py::arg("memory_limit") = -1, py::arg("machine") = "host",
      "Latency-hiding scheduling of a scheduled module, in place; returns the report.");
  sm.def(
      "rematerialize",
      [](const ModulePtr& module, int64_t limit) {
        if (!module->has_schedule()) {
          throw UserError(ErrorKind::kVerify, "module " + module->name() + " is not scheduled");
        }
        schedule::RematReport r;
        {
          py::gil_scoped_release release;
          r = schedule::Rematerialize(*module, limit);
          module->Cleanup();
        }
        py::list remats;
        for (const schedule::Remat& x : r.remats) {
          py::dict d;
          d["instruction"] = x.instruction;
          d["clone"] = x.clone;
          d["bytes_saved"] = x.bytes_saved;
          d["output"] = x.output >= 0 ? py::object(py::int_(x.output)) : py::object(py::none());
          remats.append(d);
        }
        py::dict d;
        d["memory_limit"] = r.memory_limit;
        d["peak_before"] = r.peak_before;
        d["peak_after"] = r.peak_after;
        d["remats"] = remats;
        d["text"] = r.ToString();
        return d;
      },
      py::arg("module"), py::arg("memory_limit"),
      "Rematerialization of a scheduled module, in place, down to `memory_limit` bytes.");
  sm.def(
      "peak_bytes",
      [](const ModulePtr& module) {
        if (!module->has_schedule()) {
          throw UserError(ErrorKind::kVerify, "module " + module->name() + " is not scheduled");
        }
        const auto alias = analysis::HloAliasAnalysis::Run(*module);
        const analysis::MemoryPeak p =
            analysis::SimulatePeak(*alias, analysis::SequencesOf(*module));
        return py::make_tuple(p.bytes, p.time);
      },
      py::arg("module"),
      "(bytes, time): the most temporary bytes live at once under the module's schedule.");
  sm.def(
      "dataflow_text",
      [](const ModulePtr& module) {
        return analysis::HloDataflowAnalysis::Run(*module)->ToString();
      },
      py::arg("module"), "The dataflow analysis: values, positions, uses, phi inputs.");
  sm.def(
      "alias_text",
      [](const ModulePtr& module) { return analysis::HloAliasAnalysis::Run(*module)->ToString(); },
      py::arg("module"), "The alias analysis: buffers holding more than one value.");

  py::module_ bm = m.def_submodule("buffers", "Buffer assignment.");
  py::class_<PyBufferAssignment>(bm, "BufferAssignment")
      .def_property_readonly("peak_bytes",
                             [](const PyBufferAssignment& p) { return p.ba->peak_bytes(); })
      .def_property_readonly("aligned_peak_bytes",
                             [](const PyBufferAssignment& p) { return p.ba->aligned_peak_bytes(); })
      .def_property_readonly("peak_time",
                             [](const PyBufferAssignment& p) { return p.ba->peak_time(); })
      .def_property_readonly("arena_bytes",
                             [](const PyBufferAssignment& p) { return p.ba->arena_bytes(); })
      .def_property_readonly("arena_index",
                             [](const PyBufferAssignment& p) { return p.ba->arena(); })
      .def_property_readonly(
          "end_time", [](const PyBufferAssignment& p) { return p.ba->liveness().end_time(); })
      .def("allocations", [](const PyBufferAssignment& p) { return AllocationsToPython(*p.ba); })
      .def("to_text", [](const PyBufferAssignment& p) { return p.ba->ToText(); })
      .def("problems", [](const PyBufferAssignment& p) { return p.ba->Check(); })
      .def(
          "set_offset",
          [](PyBufferAssignment& p, int64_t buffer, int64_t offset) {
            const auto& buffers = p.ba->alias().buffers();
            if (buffer < 0 || buffer >= static_cast<int64_t>(buffers.size()))
              throw std::out_of_range("no buffer " + std::to_string(buffer));
            p.ba->SetOffset(buffers[buffer], offset);
          },
          py::arg("buffer"), py::arg("offset"));
  bm.def(
      "assign",
      [](const ModulePtr& module) {
        PyBufferAssignment p{module, nullptr};
        py::gil_scoped_release release;
        p.ba = buffers::BufferAssignment::Run(*module);
        return p;
      },
      py::arg("module"), "Buffer assignment of a scheduled module.");
}

}  // namespace uir::python
