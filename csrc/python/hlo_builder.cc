// Bindings for building HLO: ModuleBuilder and ComputationBuilder, with
// attributes given as Python values.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "hlo/builder.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "python/hlo_types.h"
#include "support/error.h"

namespace py = pybind11;

namespace uir::python {
namespace {

using hlo::AttrKey;
using hlo::AttrKind;
using hlo::AttrValue;

const hlo::HloComputation* ComputationOf(const py::handle& value, AttrKey key) {
  if (!py::isinstance<PyComputation>(value)) {
    throw py::type_error(std::string(hlo::AttrName(key)) + " takes an HloComputation");
  }
  return value.cast<PyComputation&>().computation;
}

std::vector<int64_t> Ints(const py::handle& v) { return v.cast<std::vector<int64_t>>(); }

AttrValue PyToAttr(AttrKey key, const py::handle& v) {
  const std::string name(hlo::AttrName(key));
  // Text is accepted for every non-computation attribute: it is what
  // the parser reads after `name=`.
  const AttrKind kind = hlo::AttrKindOf(key);
  const bool textual = kind != AttrKind::kString && kind != AttrKind::kIdentifier &&
                       kind != AttrKind::kEnum && kind != AttrKind::kRaw &&
                       kind != AttrKind::kSharding && kind != AttrKind::kBackendConfig;
  if (textual && py::isinstance<py::str>(v) && kind != AttrKind::kComputation) {
    return hlo::ParseAttributeValue(key, v.cast<std::string>());
  }
  try {
    switch (kind) {
      case AttrKind::kInt:
        return v.cast<int64_t>();
      case AttrKind::kBool:
        return v.cast<bool>();
      case AttrKind::kFloat:
        return v.cast<double>();
      case AttrKind::kString:
      case AttrKind::kRaw:
        return v.cast<std::string>();
      case AttrKind::kIdentifier:
      case AttrKind::kEnum:
        return hlo::ParseAttributeValue(key, v.cast<std::string>());
      case AttrKind::kIntList:
        return Ints(v);
      case AttrKind::kIntListList:
        return v.cast<std::vector<std::vector<int64_t>>>();
      case AttrKind::kBoolList:
        return v.cast<std::vector<bool>>();
      case AttrKind::kComputation:
        return const_cast<hlo::HloComputation*>(ComputationOf(v, key));
      case AttrKind::kComputationList: {
        std::vector<hlo::HloComputation*> out;
        for (const py::handle& c : v)
          out.push_back(const_cast<hlo::HloComputation*>(ComputationOf(c, key)));
        return out;
      }
      case AttrKind::kSliceRanges: {
        std::vector<hlo::SliceRange> out;
        for (const py::handle& r : v) {
          auto t = r.cast<std::vector<int64_t>>();
          if (t.size() != 2 && t.size() != 3)
            throw py::value_error("slice ranges are (start, limit[, stride])");
          out.push_back({t[0], t[1], t.size() == 3 ? t[2] : 1});
        }
        return out;
      }
      case AttrKind::kPadding: {
        hlo::PaddingConfig out;
        for (const py::handle& r : v) {
          auto t = r.cast<std::vector<int64_t>>();
          if (t.size() != 2 && t.size() != 3)
            throw py::value_error("padding entries are (low, high[, interior])");
          out.push_back({t[0], t[1], t.size() == 3 ? t[2] : 0});
        }
        return out;
      }
      case AttrKind::kPrecisionList:
        return v.cast<std::vector<std::string>>();
      case AttrKind::kShape:
        return ToShape(v);
      case AttrKind::kShapeList: {
        std::vector<hlo::Shape> out;
        for (const py::handle& s : v) out.push_back(ToShape(s));
        return out;
      }
      case AttrKind::kLiteral:
        return NumpyToLiteral(v);
      case AttrKind::kReplicaGroups: {
        hlo::ReplicaGroups g;
        g.groups = v.cast<std::vector<std::vector<int64_t>>>();
        return g;
      }
      case AttrKind::kSharding:
        return hlo::ParseAttributeValue(key, v.cast<std::string>());
      case AttrKind::kFrontendAttributes: {
        hlo::FrontendAttributes out;
        for (const auto& [k, value] : v.cast<py::dict>())
          out.push_back({k.cast<std::string>(), value.cast<std::string>(), false});
        return out;
      }
      case AttrKind::kMetadata: {
        hlo::Metadata md;
        for (const auto& [k, value] : v.cast<py::dict>()) {
          const std::string f = k.cast<std::string>();
          if (f == "op_type")
            md.op_type = value.cast<std::string>();
          else if (f == "op_name")
            md.op_name = value.cast<std::string>();
          else if (f == "source_file")
            md.source_file = value.cast<std::string>();
          else if (f == "source_line")
            md.source_line = value.cast<int64_t>();
          else if (f == "source_column")
            md.source_column = value.cast<int64_t>();
          else
            throw py::value_error("unknown metadata field '" + f + "'");
        }
        return md;
      }
      case AttrKind::kBackendConfig: {
        // Text in braces is a raw block, as XLA prints a dictionary or
        // JSON config (`backend_config={uplo = 76 : ui8}`); other text
        // is a quoted string.
        const std::string text = v.cast<std::string>();
        const bool block = text.size() >= 2 && text.front() == '{' && text.back() == '}';
        return hlo::BackendConfig{text, block};
      }
      default:
        break;
    }
  } catch (const py::cast_error&) {
    throw py::type_error("attribute " + name + " cannot take " +
                         py::str(py::type::of(v)).cast<std::string>());
  }
  throw py::type_error("attribute " + name + " takes its text form here, e.g. the text after '" +
                       name + "='");
}

hlo::AttributeMap ToAttributes(const py::kwargs& kwargs) {
  hlo::AttributeMap attrs;
  for (const auto& [k, v] : kwargs) {
    const std::string name = k.cast<std::string>();
    auto key = hlo::AttrKeyFromName(name);
    if (!key) throw py::type_error("unknown HLO attribute '" + name + "'");
    attrs.Set(*key, PyToAttr(*key, v));
  }
  return attrs;
}

// A computation under construction; shares ownership with the instructions
// handed to Python until it is built into the module.
struct BuilderState {
  ModulePtr module;
  std::unique_ptr<hlo::ComputationBuilder> builder;
  bool built = false;
  hlo::HloComputation* existing = nullptr;  // adding to a computation of the module
};

struct PyComputationBuilder {
  std::shared_ptr<BuilderState> state;

  hlo::ComputationBuilder& builder() const {
    if (state->built) throw py::value_error("this computation has already been built");
    return *state->builder;
  }
  PyInstruction Wrap(hlo::HloInstruction* i) const {
    if (state->existing != nullptr) return {state->module, i, nullptr};
    return {state->module, i, state};
  }
  hlo::HloInstruction* Unwrap(const PyInstruction& i) const {
    if (state->existing != nullptr) {
      if (i.instruction->parent() != state->existing || i.instruction->is_removed()) {
        throw py::value_error("operand %" + i.instruction->name() + " is not in computation " +
                              state->existing->name());
      }
      return i.instruction;
    }
    if (i.owner != state) {
      throw py::value_error("operand %" + i.instruction->name() +
                            " belongs to another computation");
    }
    return i.instruction;
  }
};

struct PyModuleBuilder {
  ModulePtr module;
};

}  // namespace

hlo::Literal NumpyToLiteral(const py::handle& value, bool allow_view) {
  py::array array = py::array::ensure(value);
  if (!array) throw py::type_error("expected a NumPy array or scalar");
  const bool native = array.dtype().byteorder() != '>';
  if (!native) array = array.attr("astype")(array.dtype().attr("newbyteorder")("="));
  auto type = PrimitiveTypeFromDtypeName(py::str(array.dtype()).cast<std::string>());
  if (!type)
    throw py::type_error("no HLO element type for dtype " +
                         py::str(array.dtype()).cast<std::string>());
  // Row-major, aligned, native byte order: read in place. Anything else is
  // copied into that form first.
  const bool in_place = (array.flags() & py::array::c_style) &&
                        (array.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  if (!in_place)
    array = py::array::ensure(
        array, py::array::c_style | py::array::forcecast | py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  const hlo::Shape shape(*type, dims);
  const size_t bytes = static_cast<size_t>(shape.element_count()) * StorageBytes(*type);
  if (bytes != static_cast<size_t>(array.nbytes()))
    throw py::type_error("unexpected item size for " + py::str(array.dtype()).cast<std::string>());
  const auto* data = static_cast<const uint8_t*>(array.data());
  const int bits = BitWidth(*type);
  if (IsInteger(*type) && bits < 8) {
    // ml_dtypes keeps a sub-byte integer in its byte's low bits and reads
    // no others; a literal holds the value itself (sign-extended, or the
    // upper bits clear), which the evaluator's byte-wide arithmetic needs.
    hlo::Literal literal(shape);
    uint8_t* out = literal.mutable_bytes().data();
    const int mask = (1 << bits) - 1, sign = 1 << (bits - 1);
    for (size_t i = 0; i < bytes; ++i) {
      int v = data[i] & mask;
      if (IsSigned(*type) && (v & sign) != 0) v -= 1 << bits;
      out[i] = static_cast<uint8_t>(v);
    }
    return literal;
  }
  if (allow_view) {
    // The literal keeps the array alive; the last copy to go releases it,
    // taking the GIL to do so.
    auto* owner = new py::object(array);
    std::shared_ptr<const void> keepalive(owner, [](const void* p) {
      py::gil_scoped_acquire gil;
      delete static_cast<const py::object*>(p);
    });
    return hlo::Literal::View(shape, data, std::move(keepalive));
  }
  hlo::Literal literal(shape);
  if (bytes) std::memcpy(literal.mutable_bytes().data(), data, bytes);
  return literal;
}

void BindHloBuilder(py::module_& sm) {
  py::class_<PyComputationBuilder>(
      sm, "ComputationBuilder",
      "Builds one computation; shapes are inferred where XLA infers them.")
      .def(
          "parameter",
          [](PyComputationBuilder& b, int64_t number, const py::object& shape,
             const std::string& name) {
            return b.Wrap(b.builder().Parameter(number, ToShape(shape), name));
          },
          py::arg("number"), py::arg("shape"), py::arg("name") = "")
      .def(
          "constant",
          [](PyComputationBuilder& b, const py::object& value, const std::string& name) {
            return b.Wrap(b.builder().Constant(NumpyToLiteral(value), name));
          },
          py::arg("value"), py::arg("name") = "")
      .def(
          "op",
          [](PyComputationBuilder& b, const std::string& opcode, const py::args& operands,
             const py::kwargs& kwargs) {
            auto op = hlo::OpcodeFromName(opcode);
            if (!op) throw py::value_error("unknown opcode '" + opcode + "'");
            py::kwargs attrs;
            std::optional<hlo::Shape> shape;
            std::string name;
            for (const auto& [k, v] : kwargs) {
              const std::string key = k.cast<std::string>();
              if (key == "shape") {
                shape = ToShape(v);
              } else if (key == "name") {
                name = v.cast<std::string>();
              } else {
                attrs[k] = v;
              }
            }
            std::vector<hlo::HloInstruction*> ops;
            for (const py::handle& o : operands) ops.push_back(b.Unwrap(o.cast<PyInstruction&>()));
            return b.Wrap(b.builder().Add(*op, ops, ToAttributes(attrs), std::move(shape), name));
          },
          "op(opcode, *operands, shape=None, name=None, **attributes) -> HloInstruction")
      .def(
          "add_control_dependency",
          [](PyComputationBuilder& b, const PyInstruction& predecessor,
             const PyInstruction& successor) {
            hlo::HloInstruction* p = b.Unwrap(predecessor);
            hlo::HloInstruction* s = b.Unwrap(successor);
            if (p == s) throw py::value_error("an instruction cannot come before itself");
            p->AddControlDependencyTo(s);
          },
          py::arg("predecessor"), py::arg("successor"),
          "Orders `successor` after `predecessor` (a control dependency: no data flows).")
      .def(
          "broadcast",
          [](PyComputationBuilder& b, const PyInstruction& x, std::vector<int64_t> dims,
             std::vector<int64_t> broadcast_dimensions) {
            return b.Wrap(b.builder().Broadcast(b.Unwrap(x), std::move(dims),
                                                std::move(broadcast_dimensions)));
          },
          py::arg("operand"), py::arg("dims"), py::arg("broadcast_dimensions"))
      .def(
          "reshape",
          [](PyComputationBuilder& b, const PyInstruction& x, std::vector<int64_t> dims) {
            return b.Wrap(b.builder().Reshape(b.Unwrap(x), std::move(dims)));
          },
          py::arg("operand"), py::arg("dims"))
      .def(
          "convert",
          [](PyComputationBuilder& b, const PyInstruction& x, const std::string& type) {
            auto t = PrimitiveTypeFromName(type);
            if (!t) throw py::value_error("unknown element type '" + type + "'");
            return b.Wrap(b.builder().Convert(b.Unwrap(x), *t));
          },
          py::arg("operand"), py::arg("element_type"))
      .def(
          "build",
          [](PyComputationBuilder& b, const std::optional<PyInstruction>& root) {
            if (b.state->existing != nullptr)
              throw py::value_error(
                  "this builder adds to an existing computation: nothing to build");
            hlo::HloInstruction* r = root ? b.Unwrap(*root) : nullptr;
            std::unique_ptr<hlo::HloComputation> c = b.builder().Build(r);
            b.state->built = true;
            hlo::HloComputation* added = b.state->module->AddComputation(std::move(c));
            return PyComputation{b.state->module, added};
          },
          py::arg("root") = py::none(), "Finishes the computation and adds it to the module.");

  py::object computation_class = sm.attr("HloComputation");
  computation_class.attr("builder") = py::cpp_function(
      [](const PyComputation& c) {
        auto state = std::make_shared<BuilderState>();
        state->module = c.module;
        state->existing = c.computation;
        state->builder = std::make_unique<hlo::ComputationBuilder>(c.computation);
        return PyComputationBuilder{state};
      },
      py::is_method(computation_class), py::name("builder"),
      "A builder that adds instructions to this computation (shapes inferred, names unique in "
      "the module).");

  py::class_<PyModuleBuilder>(sm, "ModuleBuilder",
                              "Builds a module one computation at a time, callees first.")
      .def(py::init([](const std::string& name) {
             return PyModuleBuilder{std::make_shared<hlo::HloModule>(name)};
           }),
           py::arg("name"))
      .def(
          "computation",
          [](PyModuleBuilder& mb, const std::string& name) {
            if (mb.module->FindComputation(name))
              throw py::value_error("computation '" + name + "' already exists");
            auto state = std::make_shared<BuilderState>();
            state->module = mb.module;
            state->builder = std::make_unique<hlo::ComputationBuilder>(name);
            return PyComputationBuilder{state};
          },
          py::arg("name"))
      .def(
          "build",
          [](PyModuleBuilder& mb, const PyComputation& entry) {
            if (entry.module != mb.module)
              throw py::value_error("the entry belongs to another module");
            mb.module->set_entry(entry.computation);
            hlo::ModuleConfig& cfg = mb.module->mutable_config();
            std::vector<hlo::Shape> params;
            for (hlo::HloInstruction* p : entry.computation->parameters())
              params.push_back(p->shape());
            cfg.entry_parameter_layouts = std::move(params);
            cfg.entry_result_layout = entry.computation->root()->shape();
            hlo::Verify(*mb.module);
            ModulePtr out = mb.module;
            mb.module = std::make_shared<hlo::HloModule>(out->name());
            return out;
          },
          py::arg("entry"),
          "Sets the entry, verifies and returns the module; the builder starts afresh.");
}

}  // namespace uir::python
