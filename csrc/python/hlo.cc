// Bindings for the HLO IR: modules, computations, instructions and shapes.
// Computations and instructions are views that keep their module alive.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>

#include "hlo/mutator.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/reduction_kind.h"
#include "hlo/verifier.h"
#include "python/bindings.h"
#include "python/hlo_types.h"
#include "support/float_format.h"

namespace py = pybind11;

namespace uir::python {
namespace {

using hlo::AttrKey;
using hlo::AttrKind;
using hlo::AttrValue;

// The Python dtype of `type` (NumPy's or ml_dtypes'), or None where it has none.
py::object DtypeObject(PrimitiveType type) {
  const std::string name(DtypeName(type));
  switch (DtypeSourceOf(type)) {
    case DtypeSource::kNumPy:
      return py::dtype(name);
    case DtypeSource::kMlDtypes:
      return py::dtype::from_args(py::module_::import("ml_dtypes").attr(name.c_str()));
    case DtypeSource::kNone:
      break;
  }
  return py::none();
}

// Shape.dtype: NumPy's dtype where NumPy has one, else the HLO type name.
py::object Dtype(PrimitiveType type) {
  if (DtypeSourceOf(type) == DtypeSource::kNumPy) return DtypeObject(type);
  return py::str(std::string(PrimitiveTypeName(type)));
}

}  // namespace

// A literal as a NumPy array: the natural dtype where NumPy has one, float32
// for the narrow float types, int8/uint8 for sub-byte integers; tuples become
// Python tuples.
py::array NewArray(const hlo::Shape& s) {
  std::vector<py::ssize_t> dims(s.dimensions().begin(), s.dimensions().end());
  const PrimitiveType t = s.element_type();
  py::object dtype = DtypeObject(t);
  if (!dtype.is_none()) return py::array(py::dtype::from_args(dtype), dims);
  // s1 and u1 have no ml_dtypes twin: int8/uint8 holding the values.
  return py::array(py::dtype(IsSigned(t) ? "int8" : "uint8"), dims);
}

py::object LiteralToPython(const hlo::Literal& l) {
  const hlo::Shape& s = l.shape();
  if (s.IsTuple()) {
    py::tuple t(l.tuple_elements().size());
    for (size_t i = 0; i < l.tuple_elements().size(); ++i)
      t[i] = LiteralToPython(l.tuple_elements()[i]);
    return t;
  }
  if (!s.IsArray()) return py::none();
  py::array out = NewArray(s);
  if (!l.bytes().empty()) std::memcpy(out.mutable_data(), l.bytes().data(), l.bytes().size());
  const int bits = BitWidth(s.element_type());
  if (IsInteger(s.element_type()) && bits < 8) {
    // As ml_dtypes writes a sub-byte integer (and compiled code does): its
    // low bits, zeros above.
    auto* bytes = static_cast<uint8_t*>(out.mutable_data());
    for (size_t i = 0; i < l.bytes().size(); ++i) bytes[i] &= static_cast<uint8_t>((1 << bits) - 1);
  }
  return out;
}

namespace {

// A sharding as a dict: {"kind": "tiled", "tile_dims": [...], ...}; tuple
// shardings as a list of those; forms kept as written as their text.
py::object ShardingToPython(const hlo::Sharding& s) {
  using Kind = hlo::Sharding::Kind;
  if (s.kind == Kind::kRaw) return py::str(s.text);
  if (s.kind == Kind::kTuple) {
    py::list out;
    for (const auto& e : s.tuple_elements) out.append(ShardingToPython(e));
    return out;
  }
  static const char* kKinds[] = {"replicated", "manual",  "unknown",
                                 "unreduced",  "maximal", "tiled"};
  py::dict d;
  d["kind"] = kKinds[static_cast<int>(s.kind)];
  if (s.kind == Kind::kMaximal) d["device"] = s.device;
  if (s.kind == Kind::kTiled) {
    d["tile_dims"] = s.tile_dims;
    if (s.iota) {
      d["iota_reshape_dims"] = s.iota_reshape_dims;
      d["iota_transpose_perm"] = s.iota_transpose_perm;
    } else {
      d["devices"] = s.devices;
    }
    d["last_tile_dim_replicate"] = s.last_tile_dim_replicate;
    if (!s.last_tile_dims.empty()) d["last_tile_dims"] = s.last_tile_dims;
  }
  return d;
}

py::object AttrToPython(AttrKey key, const AttrValue& v, const ModulePtr& m) {
  switch (hlo::AttrKindOf(key)) {
    case AttrKind::kInt:
      return py::int_(std::get<int64_t>(v));
    case AttrKind::kBool:
      return py::bool_(std::get<bool>(v));
    case AttrKind::kFloat:
      return py::float_(std::get<double>(v));
    case AttrKind::kEnum:
      return py::str(std::string(hlo::EnumName(key, std::get<hlo::EnumValue>(v))));
    case AttrKind::kString:
    case AttrKind::kIdentifier:
    case AttrKind::kRaw:
      return py::str(std::get<std::string>(v));
    case AttrKind::kIntList:
      return py::cast(std::get<std::vector<int64_t>>(v));
    case AttrKind::kIntListList:
      return py::cast(std::get<std::vector<std::vector<int64_t>>>(v));
    case AttrKind::kBoolList:
      return py::cast(std::get<std::vector<bool>>(v));
    case AttrKind::kComputation:
      return py::cast(PyComputation{m, std::get<hlo::HloComputation*>(v)});
    case AttrKind::kComputationList: {
      py::list out;
      for (hlo::HloComputation* c : std::get<std::vector<hlo::HloComputation*>>(v))
        out.append(py::cast(PyComputation{m, c}));
      return out;
    }
    case AttrKind::kSliceRanges: {
      py::list out;
      for (const auto& r : std::get<std::vector<hlo::SliceRange>>(v))
        out.append(py::make_tuple(r.start, r.limit, r.stride));
      return out;
    }
    case AttrKind::kPadding: {
      py::list out;
      for (const auto& p : std::get<hlo::PaddingConfig>(v))
        out.append(py::make_tuple(p.low, p.high, p.interior));
      return out;
    }
    case AttrKind::kWindow: {
      py::list out;
      for (const auto& w : std::get<hlo::Window>(v).dimensions) {
        py::dict d;
        d["size"] = w.size;
        d["stride"] = w.stride;
        d["padding"] = py::make_tuple(w.padding_low, w.padding_high);
        d["lhs_dilate"] = w.base_dilation;
        d["rhs_dilate"] = w.window_dilation;
        d["rhs_reversal"] = w.window_reversal;
        out.append(d);
      }
      return out;
    }
    case AttrKind::kDimLabels: {
      const auto& dn = hlo::AttrAs<hlo::ConvolutionDimensionNumbers>(v);
      py::dict d;
      d["labels"] = hlo::DimLabelsToString(dn);
      d["input_batch_dimension"] = dn.input_batch_dimension;
      d["input_feature_dimension"] = dn.input_feature_dimension;
      d["input_spatial_dimensions"] = dn.input_spatial_dimensions;
      d["kernel_input_feature_dimension"] = dn.kernel_input_feature_dimension;
      d["kernel_output_feature_dimension"] = dn.kernel_output_feature_dimension;
      d["kernel_spatial_dimensions"] = dn.kernel_spatial_dimensions;
      d["output_batch_dimension"] = dn.output_batch_dimension;
      d["output_feature_dimension"] = dn.output_feature_dimension;
      d["output_spatial_dimensions"] = dn.output_spatial_dimensions;
      return d;
    }
    case AttrKind::kPrecisionList:
      return py::cast(std::get<std::vector<std::string>>(v));
    case AttrKind::kShape:
      return py::cast(hlo::AttrAs<hlo::Shape>(v));
    case AttrKind::kShapeList:
      return py::cast(std::get<std::vector<hlo::Shape>>(v));
    case AttrKind::kAliasing: {
      py::list out;
      for (const auto& a : std::get<std::vector<hlo::OutputOperandAlias>>(v)) {
        out.append(py::make_tuple(py::tuple(py::cast(a.output_index)), a.operand,
                                  py::tuple(py::cast(a.operand_index))));
      }
      return out;
    }
    case AttrKind::kLiteral:
      return LiteralToPython(hlo::AttrAs<hlo::Literal>(v));
    case AttrKind::kReplicaGroups: {
      const auto& g = hlo::AttrAs<hlo::ReplicaGroups>(v);
      if (g.form == hlo::ReplicaGroups::Form::kExplicit) return py::cast(g.groups);
      return py::str(hlo::ReplicaGroupsToString(g));
    }
    case AttrKind::kSharding:
      return ShardingToPython(hlo::AttrAs<hlo::Sharding>(v));
    case AttrKind::kFrontendAttributes: {
      py::dict d;
      for (const auto& a : std::get<hlo::FrontendAttributes>(v)) d[py::str(a.key)] = a.value;
      return d;
    }
    case AttrKind::kMetadata: {
      const auto& md = hlo::AttrAs<hlo::Metadata>(v);
      py::dict d;
      auto s = [&](const char* k, const std::string& x) {
        if (!x.empty()) d[k] = x;
      };
      auto n = [&](const char* k, int64_t x) {
        if (x) d[k] = x;
      };
      s("op_type", md.op_type);
      s("op_name", md.op_name);
      s("source_file", md.source_file);
      n("source_line", md.source_line);
      n("source_end_line", md.source_end_line);
      n("source_column", md.source_column);
      n("source_end_column", md.source_end_column);
      n("stack_frame_id", md.stack_frame_id);
      s("deduplicated_name", md.deduplicated_name);
      s("scheduling_name", md.scheduling_name);
      if (!md.profile_type.empty()) d["profile_type"] = md.profile_type;
      return d;
    }
    case AttrKind::kBackendConfig:
      return py::str(hlo::AttrAs<hlo::BackendConfig>(v).text);
  }
  return py::none();
}

std::vector<PyComputation> Computations(const ModulePtr& m) {
  std::vector<PyComputation> out;
  for (const auto& c : m->computations()) out.push_back({m, c.get()});
  return out;
}

std::vector<PyInstruction> Wrap(const ModulePtr& m, const std::vector<hlo::HloInstruction*>& list,
                                const std::shared_ptr<void>& owner = nullptr) {
  std::vector<PyInstruction> out;
  for (hlo::HloInstruction* i : list) out.push_back({m, i, owner});
  return out;
}

hlo::PrintOptions Options(bool print_layout, bool print_operand_shapes, bool print_metadata,
                          bool print_large_constants, bool async_sugar) {
  hlo::PrintOptions o;
  o.print_layout = print_layout;
  o.print_operand_shapes = print_operand_shapes;
  o.print_metadata = print_metadata;
  o.print_large_constants = print_large_constants;
  o.async_sugar = async_sugar;
  return o;
}

void CheckSameComputation(const PyInstruction& a, const PyInstruction& b) {
  if (a.instruction->is_removed() || b.instruction->is_removed())
    throw py::value_error("the instruction was removed");
  if (a.instruction->parent() != b.instruction->parent()) {
    throw py::value_error("%" + a.instruction->name() + " and %" + b.instruction->name() +
                          " are in different computations");
  }
}

void CheckRemovable(const PyComputation& c, const PyInstruction& i) {
  const hlo::HloInstruction* inst = i.instruction;
  if (inst->is_removed()) throw py::value_error("%" + inst->name() + " was already removed");
  if (inst->parent() != c.computation)
    throw py::value_error("%" + inst->name() + " is not in this computation");
  if (!inst->users().empty())
    throw py::value_error("cannot remove %" + inst->name() + ": it has users");
  if (inst == c.computation->root())
    throw py::value_error("cannot remove %" + inst->name() + ": it is the root");
  if (inst->opcode() == hlo::HloOpcode::kParameter)
    throw py::value_error("cannot remove parameter %" + inst->name());
}

}  // namespace

PrimitiveType ToElementType(const py::handle& dtype) {
  if (py::isinstance<py::str>(dtype)) {
    const std::string name = dtype.cast<std::string>();
    if (auto t = PrimitiveTypeFromName(name)) return *t;
    if (auto t = PrimitiveTypeFromDtypeName(name)) return *t;
    throw py::type_error("'" + name + "' names no HLO element type or dtype");
  }
  // NumPy dtypes, scalar types (np.float32, ml_dtypes.bfloat16) and anything
  // else numpy.dtype() accepts.
  const py::dtype d = py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype));
  if (auto t = PrimitiveTypeFromDtypeName(d.attr("name").cast<std::string>())) return *t;
  throw py::type_error("dtype " + py::str(d).cast<std::string>() + " has no HLO element type");
}

namespace {

bool IsDims(const py::handle& value) {
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value)) return false;
  for (const py::handle& d : value) {
    if (!py::isinstance<py::int_>(d) && !py::hasattr(d, "__index__")) return false;
  }
  return true;
}

bool IsDtypeLike(const py::handle& value) {
  return py::isinstance<py::str>(value) || py::isinstance<py::dtype>(value) ||
         py::isinstance<py::type>(value);
}

// An array shape with the default layout, as parsed text gets.
hlo::Shape ArrayShape(const py::handle& dims, const py::handle& dtype) {
  if (!IsDims(dims)) {
    throw py::type_error("shape dimensions are a sequence of integers; got " +
                         py::repr(dims).cast<std::string>());
  }
  std::vector<int64_t> sizes;
  for (const py::handle& d : dims) {
    const int64_t n = py::int_(py::reinterpret_borrow<py::object>(d)).cast<int64_t>();
    if (n < 0) {
      throw py::value_error("negative dimension " + std::to_string(n) + " in shape " +
                            py::repr(dims).cast<std::string>());
    }
    sizes.push_back(n);
  }
  hlo::Shape shape(ToElementType(dtype), std::move(sizes));
  shape.FillMissingLayouts();
  return shape;
}

hlo::Shape TupleShape(const py::sequence& elements) {
  std::vector<hlo::Shape> out;
  out.reserve(elements.size());
  for (const py::handle& e : elements) out.push_back(ToShape(e));
  return hlo::Shape::Tuple(std::move(out));
}

}  // namespace

hlo::Shape ToShape(const py::handle& value) {
  if (py::isinstance<hlo::Shape>(value)) return value.cast<hlo::Shape>();
  if (py::isinstance<py::str>(value)) return hlo::ParseShape(value.cast<std::string>());
  if (!py::isinstance<py::sequence>(value)) {
    throw py::type_error(
        "a shape is an hlo.Shape, shape text, (dims, dtype) or a list of "
        "shapes; got " +
        py::repr(value).cast<std::string>());
  }
  const auto seq = py::reinterpret_borrow<py::sequence>(value);
  if (seq.size() == 2 && IsDims(seq[0]) && IsDtypeLike(seq[1])) return ArrayShape(seq[0], seq[1]);
  return TupleShape(seq);
}

void BindHlo(py::module_& m) {
  py::module_ sm = m.def_submodule("hlo", "XLA's HLO: parse, print, verify, inspect.");

  sm.def(
      "mutate_text",
      [](const std::string& text, uint64_t seed, int rounds) {
        py::gil_scoped_release release;
        return hlo::MutateText(text, seed, rounds);
      },
      py::arg("text"), py::arg("seed"), py::arg("rounds") = 1,
      "The module `text` changed `rounds` times by the fuzzers' structure-aware mutator "
      "(a dimension, an element type, a layout, an attribute, an operand), printed back; "
      "the result need not verify.");

  sm.def(
      "reduction_kinds",
      [] {
        py::list out;
        for (const hlo::ReductionRow& r : hlo::ReductionKinds()) {
          out.append(py::make_tuple(std::string(r.name), std::string(hlo::OpcodeName(r.opcode))));
        }
        return out;
      },
      "The reduction kinds (hlo/reduction_kind.def) as (name in the iGraph, HLO opcode) pairs.");
  sm.def(
      "reduction_identity",
      [](const std::string& kind, const std::string& type) -> py::object {
        const std::optional<hlo::ReductionKind> k = hlo::ReductionKindNamed(kind);
        const std::optional<PrimitiveType> t = PrimitiveTypeFromName(type);
        if (!k) throw py::value_error("no reduction kind '" + kind + "'");
        if (!t) throw py::value_error("no element type '" + type + "'");
        const std::optional<hlo::Literal> id = hlo::ReductionIdentity(*k, *t);
        if (!id) return py::none();
        return LiteralToPython(*id);
      },
      py::arg("kind"), py::arg("type"),
      "The identity of a reduction kind for an element type (a NumPy scalar array), or None "
      "where the kind has none; the one the evaluator, the passes, the iGraph and the emitter "
      "read.");
  sm.def(
      "element_types",
      [] {
        static const char* kSources[] = {"numpy", "ml_dtypes", ""};
        static const char* kKinds[] = {"pred",    "signed", "unsigned", "float",
                                       "complex", "token",  "opaque"};
        py::list out;
        for (int k = 0; k < kNumPrimitiveTypes; ++k) {
          const auto t = static_cast<PrimitiveType>(k);
          out.append(py::make_tuple(std::string(PrimitiveTypeName(t)), std::string(DtypeName(t)),
                                    kSources[static_cast<int>(DtypeSourceOf(t))], BitWidth(t),
                                    StorageBytes(t), kKinds[static_cast<int>(KindOf(t))]));
        }
        return out;
      },
      "Every HLO element type as (name, dtype name, dtype source, bits, storage "
      "bytes, kind), from primitive_type.def: the one table Python reads.");

  py::class_<hlo::Shape>(sm, "Shape",
                         "An HLO shape: an array (element type, dimensions, layout) or a tuple.")
      .def(py::init([](const std::string& text) { return hlo::ParseShape(text); }), py::arg("text"))
      .def(py::init([](const py::object& dims, const py::object& dtype) {
             return ArrayShape(dims, dtype);
           }),
           py::arg("dims"), py::arg("dtype"),
           "An array shape from its dimensions and a dtype (a NumPy dtype or type, an HLO "
           "element type name such as 'f32', or a dtype name such as 'float32').")
      .def_static(
          "tuple", [](const py::sequence& elements) { return TupleShape(elements); },
          py::arg("elements"), "A tuple shape of the given element shapes.")
      .def_property_readonly(
          "dtype",
          [](const hlo::Shape& s) -> py::object {
            if (s.IsTuple()) return py::none();
            return Dtype(s.IsBuffer() ? s.buffer_element().element_type() : s.element_type());
          })
      .def_property_readonly("element_type",
                             [](const hlo::Shape& s) -> py::object {
                               if (s.IsTuple() || s.IsBuffer()) return py::none();
                               return py::str(std::string(PrimitiveTypeName(s.element_type())));
                             })
      .def_property_readonly(
          "dims", [](const hlo::Shape& s) { return py::tuple(py::cast(s.dimensions())); })
      .def_property_readonly("rank", &hlo::Shape::rank)
      .def_property_readonly(
          "dynamic_dims",
          [](const hlo::Shape& s) { return py::tuple(py::cast(s.dynamic_dimensions())); })
      .def_property_readonly(
          "layout",
          [](const hlo::Shape& s) -> py::object {
            if (!s.has_layout()) return py::none();
            return py::tuple(py::cast(s.layout().minor_to_major));
          },
          "minor_to_major, or None without a layout")
      .def_property_readonly("layout_text",
                             [](const hlo::Shape& s) -> py::object {
                               if (!s.has_layout()) return py::none();
                               return py::str(hlo::LayoutToString(s.layout()));
                             })
      .def_property_readonly("is_tuple", &hlo::Shape::IsTuple)
      .def_property_readonly("tuple_shapes", [](const hlo::Shape& s) { return s.tuple_shapes(); })
      .def("__str__", [](const hlo::Shape& s) { return s.ToString(); })
      .def("__repr__", [](const hlo::Shape& s) { return "Shape('" + s.ToString() + "')"; })
      .def("__eq__", [](const hlo::Shape& a, const hlo::Shape& b) { return a == b; })
      .def("__hash__", [](const hlo::Shape& s) { return py::hash(py::str(s.ToString())); })
      .def("compatible", &hlo::Shape::Compatible, "Equal apart from layouts.");

  py::class_<PyInstruction>(sm, "HloInstruction")
      .def_property_readonly("name", [](const PyInstruction& i) { return i.instruction->name(); })
      .def_property_readonly("opcode",
                             [](const PyInstruction& i) {
                               return std::string(hlo::OpcodeName(i.instruction->opcode()));
                             })
      .def_property_readonly("shape", [](const PyInstruction& i) { return i.instruction->shape(); })
      .def_property_readonly(
          "is_elementwise",
          [](const PyInstruction& i) { return hlo::IsElementwise(i.instruction->opcode()); },
          "An elementwise unary, binary or ternary op (convert and compare included).")
      .def_property_readonly(
          "operands",
          [](const PyInstruction& i) { return Wrap(i.module, i.instruction->operands(), i.owner); })
      .def_property_readonly(
          "users",
          [](const PyInstruction& i) { return Wrap(i.module, i.instruction->users(), i.owner); })
      .def_property_readonly(
          "has_side_effect", [](const PyInstruction& i) { return i.instruction->HasSideEffect(); },
          "Whether the instruction has a side effect, or calls a computation that holds one.")
      .def_property_readonly("control_predecessors",
                             [](const PyInstruction& i) {
                               return Wrap(i.module, i.instruction->control_predecessors(),
                                           i.owner);
                             })
      .def_property_readonly("called_computations",
                             [](const PyInstruction& i) {
                               std::vector<PyComputation> out;
                               for (hlo::HloComputation* c : i.instruction->called_computations())
                                 out.push_back({i.module, c});
                               return out;
                             })
      .def_property_readonly(
          "attributes",
          [](const PyInstruction& i) {
            py::dict d;
            const hlo::HloInstruction& inst = *i.instruction;
            if (inst.opcode() == hlo::HloOpcode::kParameter)
              d["parameter_number"] = inst.parameter_number();
            if (inst.has_literal()) d["literal"] = LiteralToPython(inst.literal());
            for (const auto& [key, value] : inst.attributes().entries()) {
              d[py::str(std::string(hlo::AttrName(key)))] = AttrToPython(key, value, i.module);
            }
            return d;
          },
          "The attributes as Python values (lists, dicts, NumPy arrays, computations).")
      .def(
          "attribute_text",
          [](const PyInstruction& i, const std::string& name) -> py::object {
            const std::optional<hlo::AttrKey> key = hlo::AttrKeyFromName(name);
            if (!key) throw py::key_error("no HLO attribute named '" + name + "'");
            const hlo::AttrValue* value = i.instruction->attributes().Find(*key);
            if (value == nullptr) return py::none();
            return py::str(hlo::AttributeValueText(*key, *value));
          },
          py::arg("name"),
          "Attribute `name` as HLO text (what follows `name=`), or None when unset.")
      .def_property_readonly(
          "computation",
          [](const PyInstruction& i) { return PyComputation{i.module, i.instruction->parent()}; })
      .def_property_readonly("unique_id",
                             [](const PyInstruction& i) { return i.instruction->unique_id(); })
      .def_property_readonly("is_removed",
                             [](const PyInstruction& i) { return i.instruction->is_removed(); })
      .def(
          "replace_all_uses_with",
          [](const PyInstruction& i, const PyInstruction& replacement) {
            CheckSameComputation(i, replacement);
            if (!i.instruction->shape().Compatible(replacement.instruction->shape())) {
              throw py::value_error(
                  "cannot replace %" + i.instruction->name() + " (" +
                  i.instruction->shape().ToString() + ") with %" + replacement.instruction->name() +
                  " (" + replacement.instruction->shape().ToString() + "): the shapes differ");
            }
            i.instruction->ReplaceAllUsesWith(replacement.instruction);
          },
          py::arg("replacement"),
          "Every use of this instruction (and the root, if it is it) becomes `replacement`.")
      .def(
          "identical",
          [](const PyInstruction& a, const PyInstruction& b) {
            return a.instruction->Identical(*b.instruction);
          },
          py::arg("other"),
          "Same opcode, shape, operands, literal and attributes (names and metadata aside).")
      .def("to_text", [](const PyInstruction& i) { return hlo::PrintInstruction(*i.instruction); })
      .def("__str__", [](const PyInstruction& i) { return hlo::PrintInstruction(*i.instruction); })
      .def("__repr__",
           [](const PyInstruction& i) { return "<HloInstruction %" + i.instruction->name() + ">"; })
      .def("__eq__", [](const PyInstruction& a,
                        const PyInstruction& b) { return a.instruction == b.instruction; })
      .def("__hash__",
           [](const PyInstruction& i) { return std::hash<const void*>()(i.instruction); });

  py::class_<PyComputation>(sm, "HloComputation")
      .def_property_readonly("name", [](const PyComputation& c) { return c.computation->name(); })
      .def_property_readonly(
          "instructions",
          [](const PyComputation& c) {
            return Wrap(c.module, c.computation->MakeInstructionPostOrder(), c.owner);
          },
          "The instructions in post order.")
      .def_property_readonly("root",
                             [](const PyComputation& c) {
                               return PyInstruction{c.module, c.computation->root(), c.owner};
                             })
      .def_property_readonly("parameters",
                             [](const PyComputation& c) {
                               return Wrap(c.module, c.computation->parameters(), c.owner);
                             })
      .def_property_readonly(
          "is_entry", [](const PyComputation& c) { return c.module->entry() == c.computation; })
      .def_property_readonly(
          "instruction_count",
          [](const PyComputation& c) { return c.computation->instruction_count(); })
      .def(
          "find_instruction",
          [](const PyComputation& c, const std::string& name) -> py::object {
            hlo::HloInstruction* i = c.computation->FindInstruction(name);
            if (i == nullptr) return py::none();
            return py::cast(PyInstruction{c.module, i, c.owner});
          },
          py::arg("name"))
      .def(
          "remove_instruction",
          [](const PyComputation& c, const PyInstruction& i, bool unused_operands) {
            CheckRemovable(c, i);
            if (unused_operands) {
              c.computation->RemoveInstructionAndUnusedOperands(i.instruction);
            } else {
              c.computation->RemoveInstruction(i.instruction);
            }
          },
          py::arg("instruction"), py::arg("unused_operands") = false,
          "Removes an instruction without users that is not the root (with unused_operands, "
          "also the operands it leaves unused).")
      .def(
          "replace_instruction",
          [](const PyComputation& c, const PyInstruction& old, const PyInstruction& replacement) {
            CheckSameComputation(old, replacement);
            if (old.instruction->parent() != c.computation)
              throw py::value_error("%" + old.instruction->name() + " is not in this computation");
            if (!old.instruction->shape().Compatible(replacement.instruction->shape()))
              throw py::value_error("cannot replace %" + old.instruction->name() +
                                    ": the shapes differ");
            if (old.instruction->opcode() == hlo::HloOpcode::kParameter)
              throw py::value_error("cannot replace parameter %" + old.instruction->name());
            c.computation->ReplaceInstruction(old.instruction, replacement.instruction);
          },
          py::arg("old"), py::arg("replacement"),
          "Replaces every use of `old`, then removes it and the operands it leaves unused.")
      .def("to_text", [](const PyComputation& c) { return hlo::PrintComputation(*c.computation); })
      .def("__str__", [](const PyComputation& c) { return hlo::PrintComputation(*c.computation); })
      .def("__repr__",
           [](const PyComputation& c) { return "<HloComputation %" + c.computation->name() + ">"; })
      .def("__eq__", [](const PyComputation& a,
                        const PyComputation& b) { return a.computation == b.computation; })
      .def("__hash__",
           [](const PyComputation& c) { return std::hash<const void*>()(c.computation); });

  py::class_<hlo::HloModule, ModulePtr>(sm, "HloModule")
      .def_property_readonly("name", &hlo::HloModule::name)
      .def_property_readonly("entry",
                             [](const ModulePtr& mod) { return PyComputation{mod, mod->entry()}; })
      .def_property_readonly("computations", &Computations, "Callees before callers.")
      .def_property_readonly("is_scheduled",
                             [](const ModulePtr& mod) { return mod->config().is_scheduled; })
      .def_property(
          "replica_count", [](const ModulePtr& mod) { return mod->config().replica_count; },
          [](const ModulePtr& mod, int64_t n) {
            if (n < 1) throw py::value_error("replica_count must be positive");
            mod->mutable_config().replica_count = n;
          },
          "Replicas it runs as (the module's replica_count).")
      .def_property(
          "num_partitions", [](const ModulePtr& mod) { return mod->config().num_partitions; },
          [](const ModulePtr& mod, int64_t n) {
            if (n < 1) throw py::value_error("num_partitions must be positive");
            mod->mutable_config().num_partitions = n;
          },
          "Partitions of each replica (the module's num_partitions).")
      .def_property(
          "input_output_alias",
          [](const ModulePtr& mod) {
            py::list out;
            for (const hlo::InputOutputAlias& a : mod->config().input_output_alias) {
              out.append(py::make_tuple(py::tuple(py::cast(a.output_index)), a.parameter,
                                        py::tuple(py::cast(a.parameter_index)), a.must_alias));
            }
            return out;
          },
          [](const ModulePtr& mod, const std::vector<py::tuple>& entries) {
            std::vector<hlo::InputOutputAlias> aliases;
            for (const py::tuple& t : entries) {
              if (t.size() != 4) {
                throw py::value_error(
                    "an input_output_alias entry is (output_index, parameter, parameter_index, "
                    "must_alias)");
              }
              hlo::InputOutputAlias a;
              a.output_index = t[0].cast<std::vector<int64_t>>();
              a.parameter = t[1].cast<int64_t>();
              a.parameter_index = t[2].cast<std::vector<int64_t>>();
              a.must_alias = t[3].cast<bool>();
              aliases.push_back(std::move(a));
            }
            mod->mutable_config().input_output_alias = std::move(aliases);
          },
          "Outputs that may (or must) share a parameter's buffer, as XLA's "
          "input_output_alias: [(output_index, parameter, parameter_index, must_alias)]. "
          "verify() checks them.")
      .def(
          "to_text",
          [](const hlo::HloModule& mod, bool print_layout, bool print_operand_shapes,
             bool print_metadata, bool print_large_constants, bool async_sugar) {
            return hlo::PrintModule(mod, Options(print_layout, print_operand_shapes, print_metadata,
                                                 print_large_constants, async_sugar));
          },
          py::arg("print_layout") = true, py::arg("print_operand_shapes") = false,
          py::arg("print_metadata") = true, py::arg("print_large_constants") = true,
          py::arg("async_sugar") = true,
          "XLA-style text. async_sugar=False prints async ops in the generic async-start form.")
      .def("__str__", [](const hlo::HloModule& mod) { return hlo::PrintModule(mod); })
      .def("__repr__", [](const hlo::HloModule& mod) { return "<HloModule " + mod.name() + ">"; })
      .def(
          "verify",
          [](const hlo::HloModule& mod) {
            py::gil_scoped_release release;
            hlo::Verify(mod);
          },
          "Raises uir.VerifyError naming the first instruction that breaks an invariant.")
      .def("clone", [](const hlo::HloModule& mod) { return ModulePtr(mod.Clone()); })
      .def("fingerprint", &hlo::HloModule::Fingerprint,
           "A hash of the structure that ignores names and metadata.")
      .def(
          "update_schedule",
          [](hlo::HloModule& mod) {
            if (mod.has_schedule()) mod.mutable_schedule().Update(mod);
          },
          "Brings a scheduled module's schedule up to date after edits.")
      .def("remove_unreachable_computations", &hlo::HloModule::RemoveUnreachableComputations,
           "Removes computations the entry does not reach; returns how many.")
      .def("__eq__", [](const hlo::HloModule& a, const hlo::HloModule& b) { return a.Equals(b); })
      .def("__hash__", [](const hlo::HloModule& mod) { return py::hash(py::str(mod.name())); });
  BindHloBuilder(sm);

  sm.def(
      "parse_module",
      [](const std::string& text, const std::string& file) {
        std::unique_ptr<hlo::HloModule> module;
        {
          py::gil_scoped_release release;
          module = hlo::ParseModule(text, hlo::ParseOptions{file});
        }
        return ModulePtr(std::move(module));
      },
      py::arg("text"), py::arg("file") = "",
      "Parses HLO text; raises uir.ParseError with the line and column of the problem.");
}

}  // namespace uir::python
