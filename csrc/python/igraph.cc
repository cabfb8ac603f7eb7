// Bindings for the Unified IR: the `igraph` submodule (iGraphs, their text,
// verifier and interpreter; hardware models; Kernel Graphs).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "buffers/buffer_assignment.h"
#include "igraph/interpreter.h"
#include "igraph/kernel_graph.h"
#include "igraph/verifier.h"
#include "python/bindings.h"
#include "python/hlo_types.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

using igraph::HardwareModel;
using igraph::IGraph;
using igraph::KernelGraph;
using igraph::KernelNode;

// A Kernel Graph keeps its module and buffer assignment alive.
struct PyKernelGraph {
  ModulePtr module;
  std::shared_ptr<buffers::BufferAssignment> ba;
  std::shared_ptr<KernelGraph> graph;
};

struct PyNode {
  std::shared_ptr<PyKernelGraph> owner;
  const KernelNode* node;
};

HardwareModel HardwareFrom(const py::handle& h) {
  if (py::isinstance<py::str>(h)) {
    const std::string name = h.cast<std::string>();
    if (name == "cpu" || name == "host") return HardwareModel::Host();
    if (name == "reference-cpu") return HardwareModel::Cpu(MachineModel::Reference());
    if (name == "gpu") return HardwareModel::Gpu();
    throw py::value_error("unknown hardware model '" + name +
                          "'; use 'cpu' (this machine), 'reference-cpu' or 'gpu'");
  }
  return h.cast<HardwareModel>();
}

py::dict TensorToPython(const igraph::DramTensor& t) {
  py::dict d;
  d["value"] = t.value;
  d["allocation"] = t.allocation;
  d["offset"] = t.offset;
  d["bytes"] = t.bytes;
  d["shape"] = t.shape.ToString();
  return d;
}

py::list Tensors(const std::vector<igraph::DramTensor>& ts) {
  py::list out;
  for (const auto& t : ts) out.append(TensorToPython(t));
  return out;
}

}  // namespace

void BindIGraph(py::module_& m) {
  py::module_ im = m.def_submodule("igraph", "The Unified IR: Kernel Graphs and iGraphs.");

  py::class_<HardwareModel>(im, "HardwareModel")
      .def(py::init<>())
      .def_readwrite("target", &HardwareModel::target)
      .def_readwrite("num_group", &HardwareModel::num_group)
      .def_readwrite("num_unit", &HardwareModel::num_unit)
      .def_readwrite("reg_bytes", &HardwareModel::reg_bytes)
      .def_readwrite("sram_bytes", &HardwareModel::sram_bytes)
      .def_readwrite("vector_bytes", &HardwareModel::vector_bytes)
      .def("__eq__", [](const HardwareModel& a, const HardwareModel& b) { return a == b; })
      .def("__repr__", [](const HardwareModel& h) {
        return "HardwareModel(" + h.target + ", numGroup=" + std::to_string(h.num_group) +
               ", numUnit=" + std::to_string(h.num_unit) + ", reg=" + std::to_string(h.reg_bytes) +
               ", sram=" + std::to_string(h.sram_bytes) + ")";
      });
  im.def(
      "hardware", [](const py::handle& name) { return HardwareFrom(name); }, py::arg("name"),
      "A hardware model: 'cpu' (this machine), 'reference-cpu' or 'gpu'.");

  py::class_<IGraph>(im, "IGraph")
      .def_property_readonly("name", &IGraph::name)
      .def_property_readonly("hardware", &IGraph::hardware)
      .def_property_readonly("num_parallel", &IGraph::num_parallel)
      .def_property_readonly("num_loop", &IGraph::num_loop)
      .def_property_readonly(
          "index_vars",
          [](const IGraph& g) {
            py::list out;
            for (const auto& v : g.vars()) {
              out.append(py::make_tuple(v.name, v.extent, v.parallel ? "parallel" : "loop"));
            }
            return out;
          })
      .def_property_readonly("pointers",
                             [](const IGraph& g) {
                               py::list out;
                               for (const auto& p : g.pointers()) {
                                 py::dict d;
                                 d["name"] = p.name;
                                 d["id"] = p.id;
                                 d["level"] = std::string(igraph::LevelName(p.level));
                                 d["dtype"] = igraph::DtypeText(p.dtype);
                                 d["size"] = p.size;
                                 out.append(d);
                               }
                               return out;
                             })
      .def_property_readonly("op_count",
                             [](const IGraph& g) {
                               size_t n = 0;
                               for (auto s : {igraph::Section::kPrologue, igraph::Section::kBody,
                                              igraph::Section::kEpilogue}) {
                                 n += g.ops(s).size();
                               }
                               return n;
                             })
      .def("reg_bytes", [](const IGraph& g) { return g.BytesAt(igraph::Level::kReg); })
      .def("sram_bytes", [](const IGraph& g) { return g.BytesAt(igraph::Level::kSram); })
      .def("dram_bytes_read", &IGraph::DramBytesRead)
      .def("dram_bytes_written", &IGraph::DramBytesWritten)
      .def("to_text", [](const IGraph& g) { return igraph::ToText(g); })
      .def("__str__", [](const IGraph& g) { return igraph::ToText(g); })
      .def("verify", [](const IGraph& g) { igraph::Verify(g); })
      .def("__eq__", [](const IGraph& a, const IGraph& b) { return a == b; });

  im.def(
      "parse", [](const std::string& text) { return igraph::Parse(text); }, py::arg("text"),
      "An iGraph from its text; raises ParseError with line and column.");
  im.def(
      "interpret_igraph",
      [](const IGraph& g, const py::dict& buffers) {
        igraph::DramBuffers dram;
        std::vector<py::buffer_info> keep;
        for (const auto& [key, value] : buffers) {
          py::array a = py::reinterpret_borrow<py::array>(value);
          if (!a.writeable() || !(a.flags() & py::array::c_style)) {
            throw py::value_error("iGraph buffers must be writable C-contiguous arrays");
          }
          keep.push_back(a.request(true));
          dram[key.cast<int64_t>()] = std::span<uint8_t>(static_cast<uint8_t*>(keep.back().ptr),
                                                         static_cast<size_t>(a.nbytes()));
        }
        py::gil_scoped_release release;
        igraph::Interpret(g, dram);
      },
      py::arg("igraph"), py::arg("buffers"),
      "Runs an iGraph in place on {dram iPointer id: contiguous array}.");

  py::class_<PyNode>(im, "KernelNode")
      .def_property_readonly(
          "kind", [](const PyNode& n) { return std::string(igraph::NodeKindName(n.node->kind)); })
      .def_property_readonly("name", [](const PyNode& n) { return n.node->name; })
      .def_property_readonly("op", [](const PyNode& n) { return n.node->op; })
      .def_property_readonly("reason", [](const PyNode& n) { return n.node->reason; })
      .def_property_readonly("inputs", [](const PyNode& n) { return Tensors(n.node->inputs); })
      .def_property_readonly("outputs", [](const PyNode& n) { return Tensors(n.node->outputs); })
      .def_property_readonly("igraphs", [](const PyNode& n) { return n.node->igraphs; })
      .def_property_readonly("igraph",
                             [](const PyNode& n) -> py::object {
                               if (n.node->igraphs.empty()) return py::none();
                               return py::cast(n.node->igraphs.front());
                             })
      .def_property_readonly("scratch_bytes", [](const PyNode& n) { return n.node->scratch_bytes; })
      .def_property_readonly("subgraph_count",
                             [](const PyNode& n) { return n.node->subgraphs.size(); })
      .def("__repr__", [](const PyNode& n) {
        return "KernelNode(" + std::string(igraph::NodeKindName(n.node->kind)) + " %" +
               n.node->name + ", " + std::to_string(n.node->igraphs.size()) + " iGraphs)";
      });

  py::class_<PyKernelGraph, std::shared_ptr<PyKernelGraph>>(im, "KernelGraph")
      .def_property_readonly("name", [](const PyKernelGraph& k) { return k.graph->name(); })
      .def_property_readonly("hardware", [](const PyKernelGraph& k) { return k.graph->hardware(); })
      .def_property_readonly("nodes",
                             [](const std::shared_ptr<PyKernelGraph>& k) {
                               py::list out;
                               for (const KernelNode& n : k->graph->nodes()) {
                                 out.append(PyNode{k, &n});
                               }
                               return out;
                             })
      .def("count",
           [](const PyKernelGraph& k, const std::string& kind) {
             for (auto nk :
                  {igraph::NodeKind::kKernel, igraph::NodeKind::kCopy, igraph::NodeKind::kLibrary,
                   igraph::NodeKind::kCustomCall, igraph::NodeKind::kControlFlow,
                   igraph::NodeKind::kAsync, igraph::NodeKind::kFallback}) {
               if (igraph::NodeKindName(nk) == kind) return k.graph->CountOf(nk);
             }
             throw py::value_error("unknown node kind '" + kind + "'");
           })
      .def("to_text", [](const PyKernelGraph& k) { return k.graph->ToText(); })
      .def("interpret", [](const PyKernelGraph& k, const py::list& args) {
        std::vector<hlo::Literal> literals;
        for (const py::handle& a : args) literals.push_back(ToArgument(a));
        hlo::Literal out;
        {
          py::gil_scoped_release release;
          out = k.graph->Interpret(literals);
        }
        return LiteralToPython(out);
      });

  im.def(
      "lower",
      [](const ModulePtr& module, const py::handle& hardware) {
        if (!module->has_schedule()) {
          throw UserError(ErrorKind::kVerify, "module " + module->name() + " is not scheduled");
        }
        auto k = std::make_shared<PyKernelGraph>();
        k->module = module;
        const HardwareModel hw = HardwareFrom(hardware);
        {
          py::gil_scoped_release release;
          k->ba = buffers::BufferAssignment::Run(*module);
          k->graph = std::make_shared<KernelGraph>(KernelGraph::Lower(*module, *k->ba, hw));
        }
        return k;
      },
      py::arg("module"), py::arg("hardware") = "cpu",
      "The Kernel Graph of a scheduled module (buffer assignment is computed).");
}

}  // namespace uir::python
