// Python views of HLO objects, shared by hlo.cc and hlo_builder.cc.
#ifndef UIR_PYTHON_HLO_TYPES_H_
#define UIR_PYTHON_HLO_TYPES_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "hlo/module.h"

namespace uir::python {

using ModulePtr = std::shared_ptr<hlo::HloModule>;

// A computation or instruction, kept alive by its module (and, while it is
// being built, by its builder: `owner`).
struct PyComputation {
  ModulePtr module;
  hlo::HloComputation* computation;
  std::shared_ptr<void> owner = nullptr;
};

struct PyInstruction {
  ModulePtr module;
  hlo::HloInstruction* instruction;
  std::shared_ptr<void> owner = nullptr;
};

// NumPy values <-> literals. Arrays of a dtype NumPy or ml_dtypes names
// (bool, int*, uint*, float16/32/64, complex64/128, bfloat16, float8_*, ...)
// convert bit for bit; Python scalars take NumPy's default dtype.
// With `allow_view`, a row-major aligned array is read in place (the literal
// holds a reference to it and never writes it); otherwise its data is copied.
hlo::Literal NumpyToLiteral(const pybind11::handle& value, bool allow_view = false);
pybind11::object LiteralToPython(const hlo::Literal& literal);
// A fresh, uninitialized NumPy array for an array shape, with the dtype
// LiteralToPython gives it.
pybind11::array NewArray(const hlo::Shape& shape);
// A program argument: an array (read in place where its layout allows), or
// a tuple of arguments.
hlo::Literal ToArgument(const pybind11::handle& value);
// The element type of a dtype: a NumPy dtype or scalar type, an HLO element
// type name ("f32") or a dtype name ("float32").
PrimitiveType ToElementType(const pybind11::handle& dtype);
// A shape from Python: an hlo.Shape; shape text; an array shape as
// (dims, dtype); or a sequence of shapes, which makes a tuple shape. Shapes
// built by the tracer take the (dims, dtype) form and are never text.
hlo::Shape ToShape(const pybind11::handle& value);

void BindHloBuilder(pybind11::module_& hlo_module);

}  // namespace uir::python

#endif  // UIR_PYTHON_HLO_TYPES_H_
