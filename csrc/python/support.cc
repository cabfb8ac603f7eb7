// Translates uir's C++ errors into the Python classes of uir._src.core.errors.
#include <pybind11/pybind11.h>

#include "python/bindings.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

const char* PythonClassName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kParse:
      return "ParseError";
    case ErrorKind::kVerify:
      return "VerifyError";
    case ErrorKind::kTrace:
      return "TraceError";
    case ErrorKind::kShape:
      return "ShapeError";
    case ErrorKind::kCustomCall:
      return "CustomCallError";
    case ErrorKind::kInternal:
      return "InternalError";
    case ErrorKind::kUnimplemented:
      return "UnimplementedError";
    case ErrorKind::kMemoryLimit:
      return "MemoryLimitError";
    case ErrorKind::kSerialization:
      return "SerializationError";
    case ErrorKind::kOutOfMemory:
      return "OutOfMemoryError";
    case ErrorKind::kDevice:
      return "DeviceError";
    case ErrorKind::kDistributed:
      return "DistributedError";
  }
  return "InternalError";
}

// Text from C++ as a Python str: input bytes quoted in a message need not
// be valid UTF-8, so undecodable bytes become \xNN escapes instead of a
// UnicodeDecodeError that would hide the message.
py::str Text(std::string_view text) {
  PyObject* s =
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (s == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

// Raises the Python class for `e`, with its structured fields as keyword
// arguments. Runs with the GIL held, inside pybind11's translator.
void RaisePythonError(const Error& e) {
  try {
    py::object cls = py::module_::import("uir._src.core.errors").attr(PythonClassName(e.kind()));
    py::dict kwargs;
    if (const auto* parse = dynamic_cast<const ParseError*>(&e)) {
      const SourceLocation& loc = parse->location();
      kwargs["line"] = loc.line;
      kwargs["column"] = loc.column;
      kwargs["file"] = loc.file.empty() ? py::none() : py::object(Text(loc.file));
    } else if (const auto* verify = dynamic_cast<const VerifyError*>(&e)) {
      kwargs["instruction"] = Text(verify->instruction());
    } else if (const auto* custom = dynamic_cast<const CustomCallError*>(&e)) {
      kwargs["target"] = Text(custom->target());
    }
    py::object instance = cls(Text(e.what()), **kwargs);
    PyErr_SetObject(cls.ptr(), instance.ptr());
  } catch (py::error_already_set& failure) {
    // The error classes could not be built (uir._src.core.errors missing or
    // broken): report the original message rather than lose it.
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

void BindSupport(py::module_& m) {
  // pybind11 requires a plain function taking the exception_ptr by value.
  py::register_exception_translator([](std::exception_ptr p) {  // NOLINT(performance-*)
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      RaisePythonError(e);
    }
  });

  py::module_ sm = m.def_submodule("support", "Errors and other support code.");
  sm.def(
      "throw_for_testing",
      [](const std::string& kind, const std::string& message) {
        for (ErrorKind k :
             {ErrorKind::kParse, ErrorKind::kVerify, ErrorKind::kTrace, ErrorKind::kShape,
              ErrorKind::kCustomCall, ErrorKind::kInternal, ErrorKind::kUnimplemented,
              ErrorKind::kMemoryLimit, ErrorKind::kSerialization, ErrorKind::kOutOfMemory,
              ErrorKind::kDevice, ErrorKind::kDistributed}) {
          if (ErrorKindName(k) == kind) ThrowErrorForTesting(k, message);
        }
        throw py::value_error("unknown error kind '" + kind + "'");
      },
      py::arg("kind"), py::arg("message"),
      "Throws the C++ error of `kind` (parse, verify, trace, shape, custom_call, internal) "
      "with `message`, so tests can check how it reaches Python.");
}

}  // namespace uir::python
