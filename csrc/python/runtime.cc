// Bindings for the runtime: the worker thread pool.
#include <dlfcn.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "python/bindings.h"
#include "python/hlo_types.h"
#include "runtime/buffer_pool.h"
#include "runtime/cuda_driver.h"
#include "runtime/gemm.h"
#include "runtime/gpu_custom_call.h"
#include "support/custom_call.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace py = pybind11;

namespace uir::python {
namespace {

// Converts what a Python target returned into `shape`, naming the target
// when the structure, dtype or shape is wrong.
hlo::Literal FromPython(const py::handle& value, const hlo::Shape& shape, const std::string& name,
                        const std::string& where) {
  if (shape.IsTuple()) {
    if (!py::isinstance<py::tuple>(value) && !py::isinstance<py::list>(value)) {
      throw CustomCallError(name, where + " must be a tuple for " + shape.ToString() + ", got " +
                                      py::str(py::type::of(value)).cast<std::string>());
    }
    py::sequence seq = value.cast<py::sequence>();
    if (static_cast<int64_t>(seq.size()) != shape.tuple_shapes_size()) {
      throw CustomCallError(name, where + " must have " +
                                      std::to_string(shape.tuple_shapes_size()) +
                                      " elements, got " + std::to_string(seq.size()));
    }
    std::vector<hlo::Literal> elements;
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      elements.push_back(FromPython(seq[static_cast<size_t>(i)], shape.tuple_shapes(i), name,
                                    where + " element " + std::to_string(i)));
    }
    hlo::Literal out(shape);
    out.mutable_tuple_elements() = std::move(elements);
    return out;
  }
  hlo::Literal l = NumpyToLiteral(value);
  if (l.shape().element_type() != shape.element_type() ||
      l.shape().dimensions() != shape.dimensions()) {
    throw CustomCallError(name, where + " must be " + shape.ToString(/*print_layout=*/false) +
                                    ", got " + l.shape().ToString(false));
  }
  return l;
}

// The shape of a call buffer.
hlo::Shape ShapeOf(const CallBuffer& b) {
  if (b.IsTuple()) {
    std::vector<hlo::Shape> parts;
    for (const CallBuffer& e : b.elements) parts.push_back(ShapeOf(e));
    return hlo::Shape::Tuple(std::move(parts));
  }
  if (!b.IsArray()) return hlo::Shape::Token();
  return hlo::Shape(b.type, b.dims);
}

// A copy of what `b` holds.
hlo::Literal CopyOf(const CallBuffer& b) {
  hlo::Literal l(ShapeOf(b));
  if (b.IsTuple()) {
    for (size_t i = 0; i < b.elements.size(); ++i)
      l.mutable_tuple_elements()[i] = CopyOf(b.elements[i]);
  } else if (b.IsArray() && b.Bytes() > 0) {
    std::memcpy(l.mutable_bytes().data(), b.data, static_cast<size_t>(b.Bytes()));
  }
  return l;
}

// Writes `l` (of b's shape) into `b`.
void WriteInto(const hlo::Literal& l, const CallBuffer& b) {
  if (b.IsTuple()) {
    for (size_t i = 0; i < b.elements.size(); ++i) WriteInto(l.tuple_elements()[i], b.elements[i]);
  } else if (b.IsArray() && b.Bytes() > 0) {
    std::memcpy(b.data, l.bytes().data(), static_cast<size_t>(b.Bytes()));
  }
}

// A Python callable as a target: operands arrive as NumPy arrays (copies,
// so a target may keep them), the result is checked against the
// instruction's shape and copied into place, and a Python exception becomes
// CustomCallError with its type and message.
FrameTarget PythonTarget(const std::string& name, py::object fn) {
  std::shared_ptr<py::object> holder(new py::object(std::move(fn)), [](py::object* p) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete p;
    }
  });
  return [name, holder](const CallFrame& frame) {
    py::gil_scoped_acquire gil;
    std::string failure;
    try {
      py::tuple args(frame.operands.size());
      for (size_t i = 0; i < frame.operands.size(); ++i)
        args[i] = LiteralToPython(CopyOf(frame.operands[i]));
      py::object r = (*holder)(*args);
      WriteInto(FromPython(r, ShapeOf(frame.result), name, "the result"), frame.result);
      return;
    } catch (py::error_already_set& e) {
      failure = e.what();
    } catch (const py::builtin_exception& e) {  // cast_error, type_error from the conversion
      failure = e.what();
    }
    throw CustomCallError(name, failure);
  };
}

CustomCallApi ApiFromName(const std::string& api) {
  if (api == "original") return CustomCallApi::kOriginal;
  if (api == "status") return CustomCallApi::kStatusReturning;
  if (api == "status_unified") return CustomCallApi::kStatusReturningUnified;
  if (api == "instruction") return CustomCallApi::kFromInstruction;
  throw py::value_error(
      "api must be 'original', 'status', 'status_unified' or 'instruction', not '" + api + "'");
}

}  // namespace

void BindRuntime(py::module_& m) {
  py::module_ sm = m.def_submodule("runtime", "Thread pool, executor and buffers.");
  sm.def("blas_core", &runtime::BlasCore,
         "The BLAS library's kernel family for this CPU (uir names it from the CPU's "
         "features through OPENBLAS_CORETYPE unless that is set).");
  sm.def(
      "register_gpu_custom_call",
      [](const std::string& name, uintptr_t address, const std::string& api) {
        if (api != "original" && api != "status" && api != "status_unified" &&
            api != "instruction") {
          throw py::value_error(
              "a CUDA custom-call target's api is original, status or "
              "instruction, not '" +
              api + "'");
        }
        runtime::RegisterGpuCustomCall(name, reinterpret_cast<void*>(address),
                                       api == "original" ? runtime::GpuCallApi::kOriginal
                                       : api == "instruction"
                                           ? runtime::GpuCallApi::kFromInstruction
                                           : runtime::GpuCallApi::kStatus);
      },
      py::arg("name"), py::arg("address"), py::arg("api"),
      "Registers the C function at `address` as custom-call target `name` for the CUDA "
      "platform (XLA's GPU ABI: stream, buffers, opaque, opaque_len[, status]).");
  sm.def("gpu_custom_call_targets", &runtime::GpuCustomCallTargets);
  sm.def(
      "cuda_driver",
      [] {
        const runtime::CudaDriverInfo& info = runtime::CudaDriver();
        py::dict d;
        d["available"] = info.available;
        d["why"] = info.why;
        d["driver_version"] = info.driver_version;
        py::list devices;
        for (const runtime::CudaDeviceInfo& g : info.devices) {
          py::dict dev;
          dev["index"] = g.index;
          dev["name"] = g.name;
          dev["compute_capability"] = py::make_tuple(g.major, g.minor);
          dev["memory_bytes"] = g.memory_bytes;
          dev["multiprocessors"] = g.multiprocessors;
          devices.append(dev);
        }
        d["devices"] = devices;
        return d;
      },
      "What this process finds of the CUDA driver (libcuda.so.1, loaded at run time): "
      "available, why not, driver_version and devices.");
  sm.def("num_threads", &NumThreads,
         "Worker threads kernels run on: UIR_NUM_THREADS, else the CPUs available.");
  sm.def(
      "register_c_custom_call",
      [](const std::string& name, uintptr_t address, const std::string& api, bool check_address) {
        Dl_info info;
        if (check_address && dladdr(reinterpret_cast<void*>(address), &info) == 0) {
          throw py::value_error("custom-call target '" + name + "': " + std::to_string(address) +
                                " is not an address inside a loaded library");
        }
        RegisterCustomCallTarget(name, reinterpret_cast<void*>(address), ApiFromName(api));
      },
      py::arg("name"), py::arg("address"), py::arg("api"), py::arg("check_address") = false,
      "Registers the C function at `address` as custom-call target `name`; with "
      "check_address, an address outside every loaded library is refused.");
  sm.def(
      "register_python_custom_call",
      [](const std::string& name, py::object fn) {
        RegisterCustomCallTarget(name, PythonTarget(name, std::move(fn)));
      },
      py::arg("name"), py::arg("fn"), "Registers a Python callable as custom-call target `name`.");
  sm.def("unregister_custom_call", &UnregisterCustomCallTarget, py::arg("name"));
  sm.def("custom_call_targets", &CustomCallTargetNames,
         "Registered custom-call target names, built-in ones included.");
  sm.def(
      "parallel_sum_for_testing",
      [](int64_t n, int64_t grain, int64_t throw_at) {
        // Sums 0..n-1 through ParallelFor, so tests can check that every index
        // is visited exactly once and that a chunk's exception reaches the caller.
        std::atomic<int64_t> sum{0};
        py::gil_scoped_release release;
        ParallelFor(n, grain, [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) {
            UIR_CHECK(i != throw_at) << "chunk [" << begin << ", " << end << ") reached " << i;
            local += i;
          }
          sum += local;
        });
        return sum.load();
      },
      py::arg("n"), py::arg("grain"), py::arg("throw_at") = -1,
      "Sum of 0..n-1 computed by ParallelFor; raises InternalError at index `throw_at`.");
  sm.def(
      "buffer_pool_for_testing",
      [](const std::vector<int64_t>& sizes, int64_t limit) {
        // Under `limit`, takes a buffer of each size, gives them all back in
        // order, and returns the bytes then kept and, per size, whether a
        // second take got the very buffer given back (it was kept).
        const int64_t before = runtime::SetKeptLimitForTesting(0);  // an empty pool
        runtime::SetKeptLimitForTesting(limit);
        std::vector<void*> taken;
        for (int64_t s : sizes) taken.push_back(runtime::TakeBuffer(s));
        for (size_t k = 0; k < sizes.size(); ++k) runtime::GiveBuffer(taken[k], sizes[k]);
        const int64_t kept = runtime::KeptBytes();
        std::vector<bool> reused;
        std::vector<void*> again;
        for (size_t k = sizes.size(); k-- > 0;) {
          again.push_back(runtime::TakeBuffer(sizes[k]));
          reused.insert(reused.begin(), again.back() == taken[k]);
        }
        for (size_t k = 0; k < again.size(); ++k) {
          runtime::GiveBuffer(again[k], sizes[sizes.size() - 1 - k]);
        }
        runtime::SetKeptLimitForTesting(before);
        return py::make_tuple(kept, reused);
      },
      py::arg("sizes"), py::arg("limit"));
  sm.def(
      "nested_parallel_for_for_testing",
      [](int64_t outer, int64_t inner) {
        // An outer ParallelFor whose every index runs an inner one. Returns
        // (indices visited, inner chunks run off their outer chunk's thread,
        // outer chunks started on a thread already inside one).
        std::atomic<int64_t> visited{0}, moved{0}, reentered{0};
        {
          py::gil_scoped_release release;
          ParallelFor(outer, 1, [&](int64_t begin, int64_t end) {
            static thread_local int depth = 0;
            if (depth > 0) ++reentered;
            ++depth;
            const std::thread::id self = std::this_thread::get_id();
            for (int64_t i = begin; i < end; ++i) {
              ParallelFor(inner, 1, [&](int64_t b, int64_t e) {
                if (std::this_thread::get_id() != self) ++moved;
                visited += e - b;
              });
            }
            --depth;
          });
        }
        return py::make_tuple(visited.load(), moved.load(), reentered.load());
      },
      py::arg("outer"), py::arg("inner"));
}

}  // namespace uir::python
