// Bindings for code generation: host information and the JIT smoke kernel.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>

#include "codegen/compile_flags.h"
#include "codegen/host.h"
#include "codegen/roofline.h"
#include "codegen/smoke_kernel.h"
#include "python/bindings.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace py = pybind11;

namespace uir::python {
namespace {

using F32Array = py::array_t<float, py::array::c_style>;

std::string DescribeArray(const py::array& a) {
  std::ostringstream os;
  os << py::str(a.dtype()).cast<std::string>() << "[";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) os << (i ? "," : "") << a.shape(i);
  os << "]";
  return os.str();
}

// Chunks of at least this many elements go to one worker: below it the cost
// of waking a thread exceeds the work.
constexpr int64_t kAddGrain = 1 << 15;

class SmokeAddKernel {
 public:
  explicit SmokeAddKernel(int opt_level) {
    if (opt_level < 0 || opt_level > 3) {
      throw py::value_error("opt_level must be 0, 1, 2 or 3, got " + std::to_string(opt_level));
    }
    py::gil_scoped_release release;
    kernel_ = codegen::CompileAddF32Kernel(opt_level);
  }

  const std::string& optimized_ir() const { return kernel_.optimized_ir; }

  // Returns a + b for two float32 arrays of the same shape. Inputs must be
  // float32 already: converting silently would hide a caller's bug.
  py::array Call(const py::array& a, const py::array& b) const {
    if (!a.dtype().is(py::dtype::of<float>()) || !b.dtype().is(py::dtype::of<float>())) {
      throw ShapeError("smoke add kernel takes float32 arrays, got " + DescribeArray(a) + " and " +
                       DescribeArray(b));
    }
    bool same_shape = a.ndim() == b.ndim();
    for (py::ssize_t i = 0; same_shape && i < a.ndim(); ++i) same_shape = a.shape(i) == b.shape(i);
    if (!same_shape) {
      throw ShapeError("smoke add kernel needs equal shapes, got " + DescribeArray(a) + " and " +
                       DescribeArray(b));
    }
    // Contiguous views (copies only when the input is strided), then a fresh
    // output, so the noalias promise of the kernel holds.
    F32Array ca = F32Array::ensure(a);
    F32Array cb = F32Array::ensure(b);
    F32Array out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
    const float* pa = ca.data();
    const float* pb = cb.data();
    float* po = out.mutable_data();
    const int64_t n = out.size();
    codegen::AddF32Fn fn = kernel_.fn;
    {
      py::gil_scoped_release release;
      ParallelFor(n, kAddGrain, [&](int64_t begin, int64_t end) { fn(pa, pb, po, begin, end); });
    }
    return out;
  }

 private:
  codegen::AddF32Kernel kernel_;
};

py::dict HostInfoDict() {
  const codegen::HostInfo& h = codegen::GetHostInfo();
  py::dict d;
  d["llvm_version"] = h.llvm_version;
  d["triple"] = h.triple;
  d["cpu"] = h.cpu_name;
  d["features"] = h.features;
  return d;
}

}  // namespace

void BindCodegen(py::module_& m) {
  py::module_ sm = m.def_submodule("codegen", "LLVM code generation and the JIT.");
  sm.def(
      "stream_triad_gbs",
      [](int64_t elements) {
        if (elements < 1024) throw py::value_error("the triad needs at least 1024 elements");
        py::gil_scoped_release release;
        return codegen::StreamTriadGBs(elements);
      },
      py::arg("elements") = int64_t{1} << 25,
      "GB/s of a STREAM triad (a = b + s*c, float32) on every worker thread.");
  sm.def(
      "fma_peak_gflops",
      []() {
        py::gil_scoped_release release;
        return codegen::FmaPeakGflops();
      },
      "GFLOP/s of independent vector FMAs at the host's widest width on every worker thread.");
  sm.def(
      "compile_flags",
      [] {
        py::list out;
        for (const codegen::CompileFlagInfo& f : codegen::CompileFlagTable()) {
          py::dict row;
          row["name"] = std::string(f.name);
          row["kind"] = std::string(codegen::CompileFlagKindName(f.kind));
          if (f.kind == codegen::CompileFlagKind::kSwitch) {
            row["default"] = py::bool_(f.default_value != 0);
          } else {
            row["default"] = f.default_value;
          }
          row["shapes_code"] = f.shapes_code;
          row["doc"] = std::string(f.doc);
          out.append(row);
        }
        return out;
      },
      "The CPU backend's compile flags (codegen/compile_flags.def), in order: dicts of "
      "name, kind (vector_bits, bytes, count or switch), default, shapes_code and doc. "
      "UIR_FLAGS spells each --cpu_<name>=value; KernelGraph.compile takes them by name.");
  sm.def("host_info", &HostInfoDict,
         "The host as LLVM sees it: llvm_version, triple, cpu, features (sorted).");
  py::class_<SmokeAddKernel>(sm, "SmokeAddKernel",
                             "out = a + b over float32, built as LLVM IR in memory and compiled "
                             "by ORC for the host; proves the JIT works end to end.")
      .def(py::init<int>(), py::arg("opt_level") = 3)
      .def_property_readonly("optimized_ir", &SmokeAddKernel::optimized_ir,
                             "The kernel's LLVM IR after the optimization pipeline.")
      .def("__call__", &SmokeAddKernel::Call, py::arg("a"), py::arg("b"));
}

}  // namespace uir::python
