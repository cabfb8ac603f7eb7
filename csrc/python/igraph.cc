// Bindings for the Unified IR: the `igraph` submodule (iGraphs, their text,
// verifier and interpreter; hardware models; Kernel Graphs).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>

#include "buffers/buffer_assignment.h"
#include "codegen/aot.h"
#include "codegen/compile_flags.h"
#include "codegen/cpu_executable.h"
#include "codegen/gpu_compiler.h"
#include "codegen/gpu_executable.h"
#include "codegen/kernel_compiler.h"
#include "codegen/library_plans.h"
#include "igraph/interpreter.h"
#include "igraph/kernel_graph.h"
#include "igraph/kernel_plan.h"
#include "igraph/verifier.h"
#include "python/bindings.h"
#include "python/executable_run.h"
#include "python/hlo_types.h"
#include "runtime/buffer_pool.h"
#include "runtime/mpi_communicator.h"
#include "runtime/profiler.h"
#include "runtime/thunk.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

using igraph::HardwareModel;
using igraph::IGraph;
using igraph::KernelGraph;
using igraph::KernelNode;

// A GPU executable keeps its Kernel Graph (and so its module) alive.
struct PyGpuExecutable {
  std::shared_ptr<PyKernelGraph> owner;
  std::unique_ptr<codegen::GpuExecutable> exe;
};

struct PyNode {
  std::shared_ptr<PyKernelGraph> owner;
  const KernelNode* node;
};

// {dram iPointer id: writable C-contiguous array} as the interpreter's
// buffers; `keep` holds the arrays' buffer views.
igraph::DramBuffers DramOf(const py::dict& buffers, std::vector<py::buffer_info>& keep) {
  igraph::DramBuffers dram;
  for (const auto& [key, value] : buffers) {
    py::array a = py::reinterpret_borrow<py::array>(value);
    if (!a.writeable() || !(a.flags() & py::array::c_style)) {
      throw py::value_error("iGraph buffers must be writable C-contiguous arrays");
    }
    keep.push_back(a.request(true));
    dram[key.cast<int64_t>()] =
        std::span<uint8_t>(static_cast<uint8_t*>(keep.back().ptr), static_cast<size_t>(a.nbytes()));
  }
  return dram;
}

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
      .def(
          "llvm_ir",
          [](const IGraph& g, bool optimized) {
            codegen::CompiledKernels k;
            {
              py::gil_scoped_release release;
              codegen::KernelCompileOptions options;
              options.keep_text = true;
              k = codegen::CompileKernels({&g}, options);
            }
            if (!k.reasons[0].empty()) {
              throw UnimplementedError("iGraph " + g.name() + ": " + k.reasons[0]);
            }
            return optimized ? k.optimized_ir : k.unoptimized_ir;
          },
          py::arg("optimized") = false,
          "The LLVM IR the CPU backend emits for this iGraph (function uir_kernel_0), before or "
          "after O3 for this CPU; raises uir.UnimplementedError when it has no machine form.")
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
      .def_property_readonly(
          "plan",
          [](const IGraph& g) {
            const igraph::KernelPlan& plan = g.plan();
            py::dict d;
            d["form"] = std::string(igraph::BodyFormName(plan.form));
            d["why"] = plan.why;
            d["rows"] = plan.rows;
            d["loops"] = plan.loops;
            d["interleave"] = plan.interleave;
            d["row_scratch"] = plan.row_scratch;
            return d;
          },
          "The kernel-wide plan: form ('none' before the plan steps, 'loops', 'rows' or "
          "'coalesced'), why (loops: why the body has no row form), rows, loops (each column "
          "loop's width), interleave (per column loop, the vectors it runs side by side; empty: "
          "the compiler's choice for each) and row_scratch (bytes of row buffers).")
      .def("unplanned", &IGraph::Unplanned,
           "A copy with no plan: the kernel's and every iOp's plan cleared.")
      .def("__eq__", [](const IGraph& a, const IGraph& b) { return a == b; });

  im.def(
      "plan",
      [](const IGraph& g, const std::string& until) {
        IGraph out = g;
        igraph::PlanKernel(out, until);
        igraph::Verify(out);
        return out;
      },
      py::arg("graph"), py::arg("until") = "",
      "A planned, verified copy of an unplanned iGraph: the plan steps in order, through the "
      "step named `until` when given.");
  im.def(
      "plan_steps",
      []() {
        py::list out;
        for (const igraph::PlanStep& step : igraph::PlanSteps()) {
          out.append(py::make_tuple(std::string(step.name), std::string(step.doc)));
        }
        return out;
      },
      "The plan steps in the order they run, as (name, what it decides).");

  im.def(
      "parse", [](const std::string& text) { return igraph::Parse(text); }, py::arg("text"),
      "An iGraph from its text; raises ParseError with line and column.");
  im.def(
      "interpret_igraph",
      [](const IGraph& g, const py::dict& buffers) {
        std::vector<py::buffer_info> keep;
        const igraph::DramBuffers dram = DramOf(buffers, keep);
        py::gil_scoped_release release;
        igraph::Interpret(g, dram);
      },
      py::arg("igraph"), py::arg("buffers"),
      "Runs an iGraph in place on {dram iPointer id: contiguous array}.");
  im.def(
      "simulate_gpu_igraph",
      [](const IGraph& g, const py::dict& buffers) {
        std::vector<py::buffer_info> keep;
        const igraph::DramBuffers dram = DramOf(buffers, keep);
        py::gil_scoped_release release;
        codegen::GpuSimulator().Run(g, dram);
      },
      py::arg("igraph"), py::arg("buffers"),
      "Runs a GPU-model iGraph's kernel in place on {dram iPointer id: contiguous array}, "
      "compiled for this CPU with every GPU thread simulated.");
  im.def(
      "compile_gpu_igraph",
      [](const IGraph& g, const std::string& sm, int opt_level) {
        codegen::GpuOptions options;
        options.sm = sm;
        options.opt_level = opt_level;
        py::gil_scoped_release release;
        return codegen::CompileGpu(g, options);
      },
      py::arg("igraph"), py::arg("sm") = "sm_90", py::arg("opt_level") = 3,
      "The PTX of one GPU-model iGraph.");

  py::class_<PyGpuExecutable, std::shared_ptr<PyGpuExecutable>>(im, "GpuExecutable")
      .def_property_readonly("program", [](const PyGpuExecutable& e) { return e.exe->program(); })
      .def_property_readonly("fallbacks",
                             [](const PyGpuExecutable& e) { return e.exe->fallbacks(); })
      .def(
          "run",
          [](const PyGpuExecutable& e, const py::list& args, bool simulate) {
            std::vector<hlo::Literal> literals;
            for (const py::handle& a : args) literals.push_back(ToArgument(a));
            hlo::Literal out;
            {
              py::gil_scoped_release release;
              out = simulate ? e.exe->Simulate(literals) : e.exe->Run(literals);
            }
            return LiteralToPython(out);
          },
          py::arg("args"), py::arg("simulate") = false,
          "Runs on GPU 0 through the CUDA driver, or (simulate=True) on this CPU with the "
          "GPU simulated.")
      .def(
          "profile",
          [](const PyGpuExecutable& e, const py::list& args, bool simulate) {
            std::vector<hlo::Literal> literals;
            for (const py::handle& a : args) literals.push_back(ToArgument(a));
            hlo::Literal out;
            std::vector<runtime::GpuStepTime> times;
            {
              py::gil_scoped_release release;
              out = simulate ? e.exe->Simulate(literals, &times) : e.exe->Run(literals, &times);
            }
            static const char* const kKinds[] = {"kernel",      "copy", "gemm",        "while",
                                                 "conditional", "call", "custom-call", "host"};
            py::list events;
            double total = 0;
            for (const runtime::GpuStepTime& t : times) {
              py::dict d;
              d["name"] = t.step->name;
              d["kind"] = kKinds[static_cast<int>(t.step->kind)];
              d["id"] = reinterpret_cast<uintptr_t>(t.step);
              d["start_ns"] = static_cast<int64_t>(t.start * 1e9);
              d["end_ns"] = static_cast<int64_t>(t.end * 1e9);
              d["thread"] = 0;
              d["depth"] = t.depth;
              d["chunk"] = false;
              d["bytes"] = e.exe->BytesOf(*t.step);
              d["flops"] = e.exe->FlopsOf(*t.step);
              events.append(d);
              total = std::max(total, t.end);
            }
            return py::make_tuple(LiteralToPython(out), events, static_cast<int64_t>(total * 1e9));
          },
          py::arg("args"), py::arg("simulate") = false,
          "Runs once with every step timed by marks around it (CUDA events on a GPU): "
          "(result, events, total ns).")
      .def("serialize",
           [](const PyGpuExecutable& e) {
             std::string bytes;
             {
               py::gil_scoped_release release;
               bytes = e.exe->Serialize();
             }
             return py::bytes(bytes);
           })
      .def_property_readonly("parameters", [](const PyGpuExecutable& e) {
        py::list out;
        for (const auto& l : e.exe->plan().parameters) {
          out.append(py::make_tuple(std::string(PrimitiveTypeName(l.type)), l.dims));
        }
        return out;
      });
  im.def(
      "load_gpu_executable",
      [](const py::bytes& blob) {
        auto out = std::make_shared<PyGpuExecutable>();
        const std::string bytes = blob;
        py::gil_scoped_release release;
        out->exe = std::make_unique<codegen::GpuExecutable>(std::string_view(bytes));
        return out;
      },
      py::arg("blob"), "A GPU executable from the bytes GpuExecutable.serialize() gave.");

  py::class_<codegen::GpuProgram>(im, "GpuProgram")
      .def_readonly("sm", &codegen::GpuProgram::sm)
      .def_readonly("ptx", &codegen::GpuProgram::ptx)
      .def_readonly("llvm_ir", &codegen::GpuProgram::llvm_ir)
      .def_readonly("refused", &codegen::GpuProgram::refused)
      .def_property_readonly("kernels", [](const codegen::GpuProgram& p) {
        py::list out;
        for (const codegen::GpuLaunch& k : p.kernels) {
          py::dict d;
          d["name"] = k.name;
          d["igraph"] = k.graph;
          d["grid"] = k.grid;
          d["block"] = k.block;
          d["shared_bytes"] = k.shared_bytes;
          d["lane_bytes"] = k.lane_bytes;
          d["params"] = k.params;
          d["placement"] = k.placement;
          out.append(d);
        }
        return out;
      });

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
             for (auto nk : {igraph::NodeKind::kKernel, igraph::NodeKind::kCopy,
                             igraph::NodeKind::kLibrary, igraph::NodeKind::kCustomCall,
                             igraph::NodeKind::kControlFlow, igraph::NodeKind::kAsync,
                             igraph::NodeKind::kCollective, igraph::NodeKind::kFallback}) {
               if (igraph::NodeKindName(nk) == kind) return k.graph->CountOf(nk);
             }
             throw py::value_error("unknown node kind '" + kind + "'");
           })
      .def("to_text", [](const PyKernelGraph& k) { return k.graph->ToText(); })
      .def(
          "compile",
          [](const std::shared_ptr<PyKernelGraph>& k, int opt_level, bool keep_text,
             bool time_loop_bodies, const py::kwargs& flags) {
            if (opt_level < 0 || opt_level > 3) {
              throw py::value_error("opt_level must be 0..3, got " + std::to_string(opt_level));
            }
            codegen::CpuExecutableOptions options;
            options.opt_level = opt_level;
            options.keep_text = keep_text;
            options.time_loop_bodies = time_loop_bodies;
            for (const auto& [key, value] : flags) {
              const std::string name = key.cast<std::string>();
              int64_t number = 0;
              try {
                number = value.cast<int64_t>();  // bools are 0 and 1
              } catch (const py::cast_error&) {
                throw py::type_error("compile flag " + name + " takes an integer or a bool, got " +
                                     std::string(py::str(py::type::of(value).attr("__name__"))));
              }
              // invalid_argument (ValueError) for an unknown flag or a value
              // out of its range.
              codegen::SetCompileFlag(options.flags, name, number);
            }
            auto out = std::make_shared<PyCpuExecutable>();
            out->owner = k;
            py::gil_scoped_release release;
            out->exe = std::make_unique<codegen::CpuExecutable>(*k->graph, options);
            return out;
          },
          py::arg("opt_level") = 3, py::arg("keep_text") = false,
          py::arg("time_loop_bodies") = false,
          "Machine code for every iGraph (one LLVM module, JIT-compiled for this CPU). "
          "Keywords beyond these are the compile flags (uir._core.codegen.compile_flags(): "
          "vector_bits, streaming_bytes, concurrent_bytes, compile_threads, target_math, "
          "prefetch). time_loop_bodies=True: every kernel times its loop bodies "
          "(loop_body_times).")
      .def(
          "compile_gpu",
          [](const PyKernelGraph& k, const std::string& sm, int opt_level) {
            codegen::GpuOptions options;
            options.sm = sm;
            options.opt_level = opt_level;
            py::gil_scoped_release release;
            return codegen::CompileGpu(*k.graph, options);
          },
          py::arg("sm") = "sm_90", py::arg("opt_level") = 3,
          "PTX for every iGraph (LLVM's NVPTX back end); iGraphs with no GPU form are in "
          "`refused` with their reason.")
      .def(
          "gpu_executable",
          [](const std::shared_ptr<PyKernelGraph>& k, const std::string& sm, int opt_level) {
            codegen::GpuOptions options;
            options.sm = sm;
            options.opt_level = opt_level;
            auto out = std::make_shared<PyGpuExecutable>();
            out->owner = k;
            py::gil_scoped_release release;
            out->exe = std::make_unique<codegen::GpuExecutable>(*k->graph, options);
            return out;
          },
          py::arg("sm") = "sm_90", py::arg("opt_level") = 3,
          "The GPU executable: PTX and the plan of launches, copies, loops and host steps.")
      .def("simulate_gpu",
           [](const PyKernelGraph& k, const py::list& args) {
             std::vector<hlo::Literal> literals;
             for (const py::handle& a : args) literals.push_back(ToArgument(a));
             hlo::Literal out;
             {
               py::gil_scoped_release release;
               codegen::GpuSimulator simulator;
               out = k.graph->InterpretWith(literals, simulator);
             }
             return LiteralToPython(out);
           })
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

  py::class_<PyCpuExecutable, std::shared_ptr<PyCpuExecutable>>(im, "CpuExecutable")
      .def(
          "run",
          [](const PyCpuExecutable& e, const py::list& args, const std::vector<int64_t>& donated) {
            return RunExecutable(e, args, donated);
          },
          py::arg("args"), py::arg("donated") = std::vector<int64_t>{},
          "Runs on `args`; the arrays at the positions in `donated` may be written over with "
          "results input_output_alias places in them.")
      .def("run_distributed", &RunDistributed, py::arg("args"),
           "Runs this process's participant of a run across processes (MPI): participant = "
           "this process's rank.")
      .def("run_participants", &RunParticipants, py::arg("per_participant"),
           "Runs every participant of a replicated executable in this process, one thread "
           "each, participant i on the arguments per_participant[i]; returns their results.")
      .def_property_readonly(
          "participants", [](const PyCpuExecutable& e) { return e.exe->participants(); },
          "How many participants its collectives meet (replica_count x num_partitions).")
      .def(
          "profile",
          [](const PyCpuExecutable& e, const py::list& args) {
            runtime::Profiler profiler;
            // Across processes, this process's participant is profiled.
            runtime::Communicator* comm = e.exe->participants() > 1 && runtime::MpiInitialized()
                                              ? &runtime::MpiWorld()
                                              : nullptr;
            const int64_t start = profiler.Now();
            py::object out = RunExecutable(e, args, {}, &profiler, comm);
            const int64_t end = profiler.Now();
            py::list events;
            for (const runtime::ProfileEvent& ev : profiler.Events()) {
              const runtime::Thunk& t = *ev.thunk;
              py::dict d;
              d["name"] = t.name();
              d["kind"] = std::string(runtime::Thunk::KindName(t.kind()));
              d["id"] = reinterpret_cast<uintptr_t>(ev.thunk);
              d["start_ns"] = ev.start_ns - start;
              d["end_ns"] = ev.end_ns - start;
              d["thread"] = ev.thread;
              d["depth"] = ev.depth;
              d["chunk"] = ev.chunk;
              d["bytes"] = t.BytesMoved();
              d["flops"] = t.flops();
              events.append(d);
            }
            return py::make_tuple(out, events, end - start);
          },
          py::arg("args"),
          "Runs on `args` with every thunk timed: (result, events, call_ns). An event is a "
          "dict: the thunk's name, kind and id, start_ns and end_ns from the call's start, "
          "the worker thread, the nesting depth, whether it is one worker's chunk of a "
          "kernel, and the thunk's bytes moved and flops per execution.")
      .def_property_readonly("fallbacks",
                             [](const PyCpuExecutable& e) { return e.exe->fallbacks(); })
      .def_property_readonly("fallback_bytes",
                             [](const PyCpuExecutable& e) { return e.exe->fallback_bytes(); })
      .def(
          "cost",
          [](const PyCpuExecutable& e) {
            // Per execution of each thunk, nested sequences (loop bodies,
            // branches) counted once.
            int64_t flops = 0, bytes = 0, thunks = 0;
            std::function<void(const runtime::ThunkExecutor&)> walk =
                [&](const runtime::ThunkExecutor& seq) {
                  for (const auto& t : seq.thunks()) {
                    ++thunks;
                    flops += t->flops();
                    const std::vector<const runtime::ThunkExecutor*> nested = t->nested();
                    if (nested.empty()) bytes += t->BytesMoved();
                    for (const runtime::ThunkExecutor* n : nested) walk(*n);
                  }
                };
            walk(e.exe->thunks());
            py::dict d;
            d["flops"] = flops;
            d["bytes accessed"] = bytes;
            d["thunks"] = thunks;
            return d;
          },
          "The cost model's count over the thunks (a loop's body once): flops, bytes accessed "
          "(each thunk's reads and writes) and the number of thunks.")
      .def_property_readonly(
          "generated_code_bytes",
          [](const PyCpuExecutable& e) {
            int64_t total = 0;
            if (const auto& objects = e.exe->kernels().objects) {
              for (const std::string& o : objects->objects) total += static_cast<int64_t>(o.size());
            }
            return total;
          },
          "The bytes of the machine code's object files.")
      .def_property_readonly(
          "donations",
          [](const PyCpuExecutable& e) {
            py::list out;
            for (const auto& d : e.exe->Donations())
              out.append(py::make_tuple(d.argument, d.result));
            return out;
          },
          "(argument leaf, result leaf): results computed in the memory of a donated argument.")
      .def_property_readonly(
          "native_loops", [](const PyCpuExecutable& e) { return e.exe->native_loops(); },
          "While loops compiled as one function over their kernels.")
      .def_property_readonly(
          "thunk_text", [](const PyCpuExecutable& e) { return e.exe->thunks().ToText(); },
          "The thunk sequence a run executes: one line per thunk with the slices it reads "
          "and writes and the thunks it waits for; nested sequences indented.")
      .def_property_readonly(
          "thunk_kinds",
          [](const PyCpuExecutable& e) {
            py::dict out;
            std::function<void(const runtime::ThunkExecutor&)> count =
                [&](const runtime::ThunkExecutor& x) {
                  for (const auto& t : x.thunks()) {
                    py::str kind(std::string(runtime::Thunk::KindName(t->kind())));
                    out[kind] = (out.contains(kind) ? out[kind].cast<int64_t>() : 0) + 1;
                    for (const runtime::ThunkExecutor* sub : t->nested()) count(*sub);
                  }
                };
            count(e.exe->thunks());
            return out;
          },
          "Thunks by kind, nested sequences included.")
      .def_property_readonly(
          "concurrent", [](const PyCpuExecutable& e) { return !e.exe->thunks().sequential(); },
          "Whether the entry's thunks run as a DAG over the worker threads (else in order on "
          "the calling thread).")
      .def_property_readonly("llvm_ir",
                             [](const PyCpuExecutable& e) { return e.exe->kernels().optimized_ir; })
      .def_property_readonly(
          "llvm_ir_unoptimized",
          [](const PyCpuExecutable& e) { return e.exe->kernels().unoptimized_ir; })
      .def_property_readonly("assembly",
                             [](const PyCpuExecutable& e) { return e.exe->kernels().assembly; })
      .def_property_readonly("compile_seconds",
                             [](const PyCpuExecutable& e) {
                               const codegen::CompiledKernels& k = e.exe->kernels();
                               py::dict d;
                               d["emit"] = k.emit_seconds;
                               d["optimize"] = k.optimize_seconds;
                               d["codegen"] = k.codegen_seconds;
                               return d;
                             })
      .def_property_readonly(
          "preloaded", [](const PyCpuExecutable& e) { return e.exe->kernels().preloaded; },
          "Whether the machine code was loaded from a serialized executable (no LLVM pass ran).")
      .def(
          "loop_body_times",
          [](const PyCpuExecutable& e, bool reset) {
            py::list out;
            const double hz = codegen::CpuExecutable::TicksPerSecond();
            for (const auto& t : e.exe->LoopBodyTimes()) {
              py::dict d;
              d["node"] = t.node;
              d["graph"] = t.graph;
              d["ns"] = hz > 0 ? static_cast<double>(t.ticks) / hz * 1e9 : 0.0;
              d["bodies"] = t.bodies;
              out.append(d);
            }
            if (reset) e.exe->ResetLoopBodyTimes();
            return out;
          },
          py::arg("reset") = false,
          "With time_loop_bodies: per compiled iGraph (node order), the nanoseconds its loop "
          "bodies took summed over threads and the bodies run since the last reset.")
      .def(
          "serialize",
          [](const PyCpuExecutable& e) {
            std::string blob;
            {
              py::gil_scoped_release release;
              blob = codegen::SerializeExecutable(*e.exe);
            }
            return py::bytes(blob);
          },
          "The executable as bytes another process loads with deserialize (codegen/aot.h).");

  im.def(
      "deserialize",
      [](const py::bytes& data) {
        const std::string_view bytes = data;
        codegen::LoadedExecutable loaded;
        {
          py::gil_scoped_release release;
          loaded = codegen::DeserializeExecutable(bytes);
        }
        auto k = std::make_shared<PyKernelGraph>();
        k->module = loaded.module;
        k->ba = loaded.assignment;
        k->graph = loaded.graph;
        auto out = std::make_shared<PyCpuExecutable>();
        out->owner = k;
        out->exe = std::move(loaded.executable);
        return py::make_tuple(loaded.module, k, out);
      },
      py::arg("blob"),
      "(module, kernel graph, executable) loaded from serialize's bytes; raises "
      "uir.SerializationError for a damaged, truncated or foreign blob.");

  im.def(
      "lowering_stages",
      [](const ModulePtr& module, const std::string& name, const py::handle& hardware) {
        const hlo::HloInstruction* inst = nullptr;
        for (const hlo::HloInstruction* i : module->entry()->instructions()) {
          if (i->name() == name) inst = i;
        }
        if (inst == nullptr) {
          throw UserError(ErrorKind::kVerify, "module " + module->name() + " has no instruction %" +
                                                  name + " in its entry computation");
        }
        const HardwareModel hw = HardwareFrom(hardware);
        std::vector<igraph::LoweringStage> stages;
        {
          py::gil_scoped_release release;
          stages = igraph::LoweringStages(*inst, hw);
        }
        py::list out;
        for (const igraph::LoweringStage& s : stages) out.append(py::make_tuple(s.step, s.text));
        return out;
      },
      py::arg("module"), py::arg("name"), py::arg("hardware") = "cpu",
      "The steps lowering entry instruction `name` to planned iGraphs, as (step, text).");
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
          k->graph = std::make_shared<KernelGraph>(
              KernelGraph::Lower(*module, *k->ba, hw, codegen::CpuLibrary()));
        }
        return k;
      },
      py::arg("module"), py::arg("hardware") = "cpu",
      "The Kernel Graph of a scheduled module (buffer assignment is computed).");
}

}  // namespace uir::python
