#include "python/executable_run.h"

#include <pybind11/stl.h>

#include <algorithm>
#include <exception>
#include <string>
#include <thread>

#include "runtime/buffer_pool.h"
#include "runtime/collectives.h"
#include "runtime/mpi_communicator.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

void Flatten(const hlo::Literal& l, std::vector<const hlo::Literal*>& out) {
  if (l.shape().IsTuple()) {
    for (const hlo::Literal& e : l.tuple_elements()) Flatten(e, out);
  } else if (l.shape().IsArray()) {
    out.push_back(&l);
  }
}

py::object Assemble(const hlo::Shape& shape, const std::vector<py::array>& leaves, size_t& next) {
  if (shape.IsArray()) return leaves.at(next++);
  if (!shape.IsTuple()) return py::none();
  py::tuple t(shape.tuple_shapes().size());
  for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
    t[i] = Assemble(shape.tuple_shapes()[i], leaves, next);
  }
  return t;
}

// A NumPy array over memory from the runtime's buffer pool: the array's
// base is a capsule that gives the memory back when NumPy frees the array.
py::array PooledArray(const py::dtype& dtype, const std::vector<py::ssize_t>& dims, int64_t bytes) {
  struct Owned {
    void* data;
    int64_t bytes;
  };
  auto* owned = new Owned{runtime::TakeBuffer(bytes), bytes};
  py::capsule base(owned, [](void* p) {
    auto* o = static_cast<Owned*>(p);
    runtime::GiveBuffer(o->data, o->bytes);
    delete o;
  });
  return py::array(dtype, dims, {}, owned->data, base);
}

// One run's arguments and results, ready for CpuExecutable::Execute: the
// argument leaves (in place, or in `literals` when converted), the result
// arrays and their memory.
struct PreparedRun {
  std::vector<hlo::Literal> literals;
  std::vector<const uint8_t*> in;
  std::vector<py::array> outs;
  std::vector<uint8_t*> out;
};

// Checks and converts Python arguments for a run: arrays are read in
// place, results are fresh NumPy arrays the executable writes directly.
PreparedRun PrepareRun(const PyCpuExecutable& e, const py::list& args,
                       const std::vector<int64_t>& donated) {
  const hlo::HloComputation& entry = *e.owner->module->entry();
  if (args.size() != static_cast<size_t>(entry.num_parameters())) {
    throw ShapeError(entry.name() + " takes " + std::to_string(entry.num_parameters()) +
                     " arguments, got " + std::to_string(args.size()));
  }
  const std::vector<hlo::Shape>& params = e.exe->ParameterShapes();
  if (e.param_dtypes.empty()) {
    for (const hlo::Shape& s : params)
      e.param_dtypes.push_back(NewArray(hlo::Shape(s.element_type(), {})).dtype());
    for (const hlo::Shape& s : e.exe->ResultShapes())
      e.result_dtypes.push_back(NewArray(hlo::Shape(s.element_type(), {})).dtype());
  }
  // The fast path: one C-contiguous array of the parameter's dtype and
  // dims per array parameter, read in place.
  std::vector<const uint8_t*> in;
  bool fast = args.size() == params.size();
  for (size_t i = 0; fast && i < args.size(); ++i) {
    if (!py::isinstance<py::array>(args[i])) {
      fast = false;
      break;
    }
    auto a = py::reinterpret_borrow<py::array>(args[i]);
    const hlo::Shape& want = params[i];
    // Native byte order and an element-aligned address too: a big-endian
    // or unaligned array takes the slow path, which converts it.
    fast = (a.flags() & py::array::c_style) &&
           (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) && a.dtype().byteorder() != '>' &&
           a.dtype().num() == e.param_dtypes[i].num() &&
           a.itemsize() == e.param_dtypes[i].itemsize() && a.ndim() == want.rank();
    for (int64_t d = 0; fast && d < want.rank(); ++d) fast = a.shape(d) == want.dimensions(d);
    if (fast) in.push_back(static_cast<const uint8_t*>(a.data()));
  }
  std::vector<hlo::Literal> literals;
  if (!fast) {
    in.clear();
    for (const py::handle& a : args) literals.push_back(ToArgument(a));
  }
  std::vector<const hlo::Literal*> leaves;
  for (const hlo::Literal& l : literals) Flatten(l, leaves);
  const std::vector<hlo::Shape>& want = params;
  bool ok = fast || leaves.size() == want.size();
  for (size_t i = 0; !fast && ok && i < leaves.size(); ++i) {
    const hlo::Shape& got = leaves[i]->shape();
    ok = got.element_type() == want[i].element_type() &&
         std::vector<int64_t>(got.dimensions().begin(), got.dimensions().end()) ==
             std::vector<int64_t>(want[i].dimensions().begin(), want[i].dimensions().end());
  }
  if (!ok) {
    std::string text;
    for (const hlo::Literal& l : literals)
      text += (text.empty() ? "" : ", ") + l.shape().ToString();
    throw ShapeError("arguments (" + text + ") do not match the parameters of " + entry.name());
  }
  if (!fast) {
    for (const hlo::Literal* l : leaves) in.push_back(l->bytes().data());
  }
  const std::vector<hlo::Shape>& results = e.exe->ResultShapes();
  std::vector<py::array> outs(results.size());
  std::vector<uint8_t*> out(results.size(), nullptr);
  // Donated arguments (the caller names them; an argument is never written
  // otherwise): a writable, 64-byte aligned array no other argument
  // overlaps becomes the memory of its result, which is returned as a view
  // of it. Unaligned (NumPy aligns to 16 bytes), it is only read: vector
  // stores split across cache lines cost more than a fresh buffer (x -
  // 0.5 * g over 1M f32 in place: 0.37 ms unaligned, 0.23 ms into a new
  // aligned result); a warning says so. Results are aligned, so x = f(x)
  // donates from its second call on.
  // A donation the run cannot honour is reported (a warning saying why),
  // as JAX reports donated buffers it could not use.
  std::string refused;
  auto refuse = [&](size_t i, const std::string& why) {
    refused += "\n  argument " + std::to_string(i) + ": " + why;
  };
  for (const codegen::CpuExecutable::Donation& d : e.exe->Donations()) {
    if (std::find(donated.begin(), donated.end(), d.argument) == donated.end()) continue;
    const auto i = static_cast<size_t>(d.argument), j = static_cast<size_t>(d.result);
    if (!fast) {
      refuse(i,
             "the arguments were converted (an argument is not a C-contiguous, aligned "
             "array of its parameter's dtype), so none is written in place");
      continue;
    }
    auto a = py::reinterpret_borrow<py::array>(args[i]);
    if (!a.writeable()) {
      refuse(i, "the array is read-only");
      continue;
    }
    if (reinterpret_cast<uintptr_t>(a.data()) % 64 != 0) {
      refuse(i,
             "its address is not 64-byte aligned (NumPy aligns to 16 bytes); pass a uir "
             "result or uir.device_put(x), which are aligned");
      continue;
    }
    const auto* begin = static_cast<const uint8_t*>(a.data());
    const uint8_t* end = begin + a.nbytes();
    bool alone = true;
    for (size_t k = 0; alone && k < args.size(); ++k) {
      if (k == i) continue;
      auto b = py::reinterpret_borrow<py::array>(args[k]);
      const auto* b0 = static_cast<const uint8_t*>(b.data());
      alone = b.nbytes() == 0 || a.nbytes() == 0 || b0 + b.nbytes() <= begin || end <= b0;
    }
    if (!alone) {
      refuse(i, "its memory overlaps another argument's");
      continue;
    }
    const hlo::Shape& s = results[j];
    std::vector<py::ssize_t> dims(s.dimensions().begin(), s.dimensions().end());
    outs[j] = py::array(e.result_dtypes[j], dims, {}, a.mutable_data(), a);
    out[j] = static_cast<uint8_t*>(a.mutable_data());
  }
  if (!refused.empty()) {
    const std::string message =
        "donated arguments of " + entry.name() +
        " were not written in place; their results are new arrays:" + refused;
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 1) != 0) throw py::error_already_set();
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (out[i] != nullptr) continue;
    const hlo::Shape& s = results[i];
    std::vector<py::ssize_t> dims(s.dimensions().begin(), s.dimensions().end());
    const int64_t bytes = s.element_count() * e.result_dtypes[i].itemsize();
    try {
      outs[i] = bytes >= runtime::kPooledBytes ? PooledArray(e.result_dtypes[i], dims, bytes)
                                               : py::array(e.result_dtypes[i], dims);
    } catch (const std::bad_alloc&) {
      const hlo::HloInstruction& root = *entry.root();
      throw OutOfMemoryError(
          "cannot allocate " + DescribeBytes(static_cast<uint64_t>(bytes)) + " for " +
          (results.size() > 1 ? "result " + std::to_string(i) + " of " : std::string()) + "%" +
          root.name() + " (" + std::string(hlo::OpcodeName(root.opcode())) + ", " + s.ToString() +
          "), the result of " + entry.name());
    }
    out[i] = static_cast<uint8_t*>(outs[i].mutable_data());
  }
  return PreparedRun{std::move(literals), std::move(in), std::move(outs), std::move(out)};
}

py::object FinishRun(const PyCpuExecutable& e, PreparedRun& run) {
  size_t next = 0;
  return Assemble(e.owner->module->entry()->root()->shape(), run.outs, next);
}

}  // namespace

py::object RunExecutable(const PyCpuExecutable& e, const py::list& args,
                         const std::vector<int64_t>& donated, runtime::Profiler* profiler,
                         runtime::Communicator* communicator) {
  PreparedRun run = PrepareRun(e, args, donated);
  {
    py::gil_scoped_release release;
    e.exe->Execute(run.in, run.out, profiler, communicator);
  }
  return FinishRun(e, run);
}

py::list RunParticipants(const PyCpuExecutable& e, const py::list& per_participant) {
  const int n = static_cast<int>(per_participant.size());
  if (n != e.exe->participants()) {
    throw DistributedError(e.owner->module->name() + " runs as " +
                           std::to_string(e.exe->participants()) + " participants, given " +
                           std::to_string(n));
  }
  std::vector<PreparedRun> runs;
  for (const py::handle& args : per_participant) {
    runs.push_back(PrepareRun(e, py::reinterpret_borrow<py::list>(args), {}));
  }
  runtime::InProcessClique clique(n);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  std::vector<bool> own(static_cast<size_t>(n), false);
  {
    py::gil_scoped_release release;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        const auto k = static_cast<size_t>(r);
        try {
          e.exe->Execute(runs[k].in, runs[k].out, nullptr, &clique.Member(r));
          clique.Leave(r, "");
        } catch (const DistributedError& err) {
          errors[k] = std::current_exception();
          clique.Leave(r, err.what());
        } catch (const std::exception& err) {
          errors[k] = std::current_exception();
          own[k] = true;
          clique.Leave(r, err.what());
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t k = 0; k < errors.size(); ++k) {
      if (errors[k] && (own[k] || pass == 1)) std::rethrow_exception(errors[k]);
    }
  }
  py::list out;
  for (PreparedRun& run : runs) out.append(FinishRun(e, run));
  return out;
}

py::object RunDistributed(const PyCpuExecutable& e, const py::list& args) {
  return RunExecutable(e, args, {}, nullptr, &runtime::MpiWorld());
}

}  // namespace uir::python
