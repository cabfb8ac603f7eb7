// Verifier checks, one function per family; each throws VerifyError.
#include "hlo/verifier.h"

#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hlo/shape_inference.h"
#include "hlo/verifier_ops.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

[[noreturn]] void Fail(const HloInstruction& inst, const std::string& message) {
  throw VerifyError(inst.name(), message);
}

Shape NoLayout(Shape s) {
  s.ClearLayouts();
  return s;
}

void CheckLayouts(const HloInstruction& inst, const Shape& shape) {
  if (shape.IsTuple() || shape.IsBuffer()) {
    for (const Shape& s : shape.tuple_shapes()) CheckLayouts(inst, s);
    return;
  }
  if (!shape.has_layout() || !shape.IsArray()) return;
  const Layout& layout = shape.layout();
  const int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank &&
      !(rank == 0 && layout.minor_to_major.empty())) {
    Fail(inst, "layout {" + LayoutToString(layout) + "} does not match rank " +
                   std::to_string(rank) + " of " + shape.Describe());
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= rank || seen[d])
      Fail(inst, "layout {" + LayoutToString(layout) + "} is not a permutation");
    seen[d] = true;
  }
}

// The parameter shapes of `c`, and a description "(f32[], f32[]) -> f32[]".
std::vector<Shape> ParamShapes(const HloComputation& c) {
  std::vector<Shape> out;
  for (HloInstruction* p : c.parameters()) out.push_back(p ? NoLayout(p->shape()) : Shape());
  return out;
}

std::string Signature(const HloComputation& c) {
  return "%" + c.name() + " " + c.SignatureString(false);
}

void ExpectSignature(const HloInstruction& inst, const HloComputation& c,
                     const std::vector<Shape>& params, const std::optional<Shape>& result,
                     const std::string& role) {
  std::vector<Shape> actual = ParamShapes(c);
  bool ok = actual.size() == params.size();
  for (size_t i = 0; ok && i < params.size(); ++i) ok = actual[i].Compatible(params[i]);
  if (ok && result) ok = c.root()->shape().Compatible(*result);
  if (!ok) {
    std::string want = "(";
    for (size_t i = 0; i < params.size(); ++i) want += (i ? ", " : "") + params[i].Describe();
    want += ")";
    if (result) want += " -> " + result->Describe();
    Fail(inst, role + " " + Signature(c) + " should have the signature " + want);
  }
}

Shape Scalar(PrimitiveType t) { return Shape(t, {}); }

void CheckCalledComputations(const HloInstruction& inst) {
  const AttributeMap& a = inst.attributes();
  auto comp = [&](AttrKey k) -> HloComputation* {
    auto c = a.GetOr<HloComputation*>(k);
    return c ? *c : nullptr;
  };
  auto require = [&](AttrKey k) {
    HloComputation* c = comp(k);
    if (c == nullptr)
      Fail(inst,
           std::string(OpcodeName(inst.opcode())) + " needs " + std::string(AttrName(k)) + "=");
    return c;
  };
  const auto& ops = inst.operands();
  switch (inst.opcode()) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllReduceStart: {
      // The reducer combines two scalars; it is applied to each operand alike.
      HloComputation* c = require(AttrKey::kToApply);
      if (ops.empty() || !ops[0]->shape().IsArray()) Fail(inst, "needs array operands");
      Shape t = Scalar(ops[0]->shape().element_type());
      ExpectSignature(inst, *c, {t, t}, t, "to_apply");
      break;
    }
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: {
      HloComputation* c = require(AttrKey::kToApply);
      size_t n = ops.size() / 2;
      std::vector<Shape> params, results;
      for (size_t i = 0; i < n; ++i) {
        const HloInstruction* init = ops[n + i];
        if (!init->shape().IsArray()) Fail(inst, "operand %" + init->name() + " must be an array");
        results.push_back(Scalar(init->shape().element_type()));
      }
      params = results;
      params.insert(params.end(), results.begin(), results.end());
      ExpectSignature(inst, *c, params, n == 1 ? results[0] : Shape::Tuple(results), "to_apply");
      break;
    }
    case HloOpcode::kMap: {
      HloComputation* c = require(AttrKey::kToApply);
      std::vector<Shape> params;
      for (const HloInstruction* o : ops) params.push_back(Scalar(o->shape().element_type()));
      ExpectSignature(inst, *c, params, Scalar(inst.shape().element_type()), "to_apply");
      break;
    }
    case HloOpcode::kSort: {
      HloComputation* c = require(AttrKey::kToApply);
      std::vector<Shape> params;
      for (const HloInstruction* o : ops) {
        params.push_back(Scalar(o->shape().element_type()));
        params.push_back(Scalar(o->shape().element_type()));
      }
      ExpectSignature(inst, *c, params, Scalar(PrimitiveType::kPred), "comparator");
      break;
    }
    case HloOpcode::kScatter: {
      HloComputation* c = require(AttrKey::kToApply);
      size_t n = (ops.size() - 1) / 2;
      std::vector<Shape> params, results;
      for (size_t i = 0; i < n; ++i) results.push_back(Scalar(ops[i]->shape().element_type()));
      params = results;
      params.insert(params.end(), results.begin(), results.end());
      ExpectSignature(inst, *c, params, n == 1 ? results[0] : Shape::Tuple(results), "to_apply");
      break;
    }
    case HloOpcode::kSelectAndScatter: {
      PrimitiveType t = ops[0]->shape().element_type();
      PrimitiveType st = ops[1]->shape().element_type();
      ExpectSignature(inst, *require(AttrKey::kSelect), {Scalar(t), Scalar(t)},
                      Scalar(PrimitiveType::kPred), "select");
      ExpectSignature(inst, *require(AttrKey::kScatter), {Scalar(st), Scalar(st)}, Scalar(st),
                      "scatter");
      break;
    }
    case HloOpcode::kWhile: {
      const Shape loop = NoLayout(ops[0]->shape());
      ExpectSignature(inst, *require(AttrKey::kCondition), {loop}, Scalar(PrimitiveType::kPred),
                      "condition");
      ExpectSignature(inst, *require(AttrKey::kBody), {loop}, loop, "body");
      break;
    }
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      HloComputation* c =
          require(inst.opcode() == HloOpcode::kCall ? AttrKey::kToApply : AttrKey::kCalls);
      std::vector<Shape> params;
      for (const HloInstruction* o : ops) params.push_back(NoLayout(o->shape()));
      ExpectSignature(inst, *c, params, NoLayout(inst.shape()),
                      inst.opcode() == HloOpcode::kCall ? "to_apply" : "calls");
      if (inst.opcode() == HloOpcode::kFusion && !a.Has(AttrKey::kKind))
        Fail(inst, "fusion needs kind=");
      break;
    }
    case HloOpcode::kConditional: {
      std::vector<HloComputation*> branches;
      if (auto b = a.GetOr<std::vector<HloComputation*>>(AttrKey::kBranchComputations)) {
        branches = *b;
        if (ops.empty() || ops[0]->shape().element_type() != PrimitiveType::kS32 ||
            ops[0]->shape().rank() != 0) {
          Fail(inst, "branch_computations need an s32[] branch index");
        }
      } else {
        if (ops.empty() || ops[0]->shape().element_type() != PrimitiveType::kPred ||
            ops[0]->shape().rank() != 0) {
          Fail(inst, "true_computation/false_computation need a pred[] predicate");
        }
        branches = {require(AttrKey::kTrueComputation), require(AttrKey::kFalseComputation)};
      }
      if (ops.size() != branches.size() + 1) {
        Fail(inst, "conditional has " + std::to_string(branches.size()) + " branches but " +
                       std::to_string(ops.size() - 1) + " branch operands");
      }
      for (size_t i = 0; i < branches.size(); ++i) {
        ExpectSignature(inst, *branches[i], {NoLayout(ops[i + 1]->shape())}, NoLayout(inst.shape()),
                        "branch " + std::to_string(i));
      }
      break;
    }
    default:
      break;
  }
}

void CheckAsync(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kAsyncStart) {
    auto c = inst.attributes().GetOr<HloComputation*>(AttrKey::kCalls);
    if (!c) Fail(inst, "async-start needs calls=");
    const HloInstruction* wrapped = (*c)->root();
    if (IsOwnAsyncFamily(wrapped->opcode())) {
      Fail(inst, "async-start cannot wrap " + std::string(OpcodeName(wrapped->opcode())) +
                     ": it has its own " + std::string(OpcodeName(wrapped->opcode())) +
                     "-start/-done opcodes");
    }
    if (IsAsyncOpcode(wrapped->opcode())) Fail(inst, "async-start cannot wrap another async op");
    const Shape& s = inst.shape();
    if (!s.IsTuple() || s.tuple_shapes_size() < 2 || !s.tuple_shapes(0).IsTuple()) {
      Fail(inst,
           "async-start's shape must be ((operands...), result, state...), got " + s.Describe());
    }
    const Shape& operand_tuple = s.tuple_shapes(0);
    if (operand_tuple.tuple_shapes_size() != inst.operand_count()) {
      Fail(inst, "async-start's shape lists " + std::to_string(operand_tuple.tuple_shapes_size()) +
                     " operands but it has " + std::to_string(inst.operand_count()));
    }
    std::vector<Shape> params;
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (!operand_tuple.tuple_shapes(i).Compatible(inst.operand(i)->shape())) {
        Fail(inst, "async-start operand " + std::to_string(i) + " has shape " +
                       inst.operand(i)->shape().Describe() + " but its shape lists " +
                       operand_tuple.tuple_shapes(i).Describe());
      }
      params.push_back(NoLayout(inst.operand(i)->shape()));
    }
    ExpectSignature(inst, **c, params, NoLayout(s.tuple_shapes(1)), "async computation");
  }
  if (op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate) {
    if (inst.users().size() != 1 || (inst.users()[0]->opcode() != HloOpcode::kAsyncUpdate &&
                                     inst.users()[0]->opcode() != HloOpcode::kAsyncDone)) {
      Fail(inst, std::string(OpcodeName(op)) +
                     " must have exactly one user, an async-update or async-done; it has " +
                     std::to_string(inst.users().size()));
    }
  }
  if (op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone) {
    const HloInstruction* prev = inst.operand(0);
    if (prev->opcode() != HloOpcode::kAsyncStart && prev->opcode() != HloOpcode::kAsyncUpdate) {
      Fail(inst, std::string(OpcodeName(op)) + "'s operand %" + prev->name() +
                     " is not an async-start or async-update");
    }
    const HloInstruction* start = inst.async_chain_start();
    if (start == nullptr) Fail(inst, "no async-start at the head of the chain");
    if (auto c = inst.attributes().GetOr<HloComputation*>(AttrKey::kCalls)) {
      auto sc = start->attributes().GetOr<HloComputation*>(AttrKey::kCalls);
      if (!sc || *sc != *c) Fail(inst, "calls= differs from the one on %" + start->name());
    }
    if (op == HloOpcode::kAsyncUpdate && !inst.shape().Compatible(start->shape())) {
      Fail(inst, "async-update's shape must equal the async-start's " + start->shape().Describe());
    }
    if (op == HloOpcode::kAsyncDone && start->shape().IsTuple() &&
        start->shape().tuple_shapes_size() >= 2 &&
        !inst.shape().Compatible(start->shape().tuple_shapes(1))) {
      Fail(inst, "async-done's shape " + inst.shape().Describe() +
                     " must be the wrapped op's result " +
                     start->shape().tuple_shapes(1).Describe());
    }
  }
}

// Ops whose result shape is written out rather than inferred still have rules.
void CheckExplicitShape(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  switch (inst.opcode()) {
    case HloOpcode::kReshape:
      if (!s.IsArray() || !operand(0).IsArray() || s.element_type() != operand(0).element_type() ||
          (s.is_static() && operand(0).is_static() &&
           s.element_count() != operand(0).element_count())) {
        Fail(inst, "reshape from " + operand(0).Describe() + " to " + s.Describe() +
                       " must keep the element type and count");
      }
      break;
    case HloOpcode::kConvert:
      if (!s.IsArray() || !operand(0).IsArray() || s.dimensions() != operand(0).dimensions()) {
        Fail(inst, "convert from " + operand(0).Describe() + " to " + s.Describe() +
                       " must keep the dimensions");
      }
      break;
    case HloOpcode::kBroadcast: {
      auto dims = inst.attributes().GetOr<std::vector<int64_t>>(AttrKey::kDimensions);
      std::vector<int64_t> d = dims.value_or(std::vector<int64_t>{});
      if (!s.IsArray() || !operand(0).IsArray() ||
          static_cast<int64_t>(d.size()) != operand(0).rank() ||
          s.element_type() != operand(0).element_type()) {
        Fail(inst,
             "broadcast of " + operand(0).Describe() + " to " + s.Describe() +
                 " needs one entry in dimensions= per operand dimension and the same element type");
      }
      for (size_t i = 0; i < d.size(); ++i) {
        // A size-1 operand dimension may stretch (XLA's shape inference allows it).
        const int64_t n = operand(0).dimensions(static_cast<int64_t>(i));
        if (d[i] < 0 || d[i] >= s.rank() || (s.dimensions(d[i]) != n && n != 1)) {
          Fail(inst, "broadcast dimension " + std::to_string(i) + " of " + operand(0).Describe() +
                         " does not map onto " + s.Describe());
        }
      }
      break;
    }
    case HloOpcode::kIota: {
      auto d = inst.attributes().GetOr<int64_t>(AttrKey::kIotaDimension);
      if (!d || !s.IsArray() || *d < 0 || *d >= s.rank())
        Fail(inst, "iota needs iota_dimension within the rank of " + s.Describe());
      break;
    }
    case HloOpcode::kBitcastConvert:
      if (s.IsArray() && operand(0).IsArray() &&
          BitWidth(s.element_type()) == BitWidth(operand(0).element_type()) &&
          s.dimensions() != operand(0).dimensions()) {
        Fail(inst, "bitcast-convert between types of equal width must keep the dimensions");
      }
      break;
    default:
      break;
  }
}

void CheckInstruction(const HloInstruction& inst, const HloModule& module,
                      const std::unordered_set<const HloComputation*>& module_computations) {
  CheckShapeLimits(inst);
  const int arity = OpcodeArity(inst.opcode());
  if (arity != kVariadic && inst.operand_count() != arity) {
    Fail(inst, std::string(OpcodeName(inst.opcode())) + " takes " + std::to_string(arity) +
                   " operand(s), has " + std::to_string(inst.operand_count()));
  }
  CheckRequiredAttributes(inst);
  CheckLayouts(inst, inst.shape());
  for (HloComputation* c : inst.called_computations()) {
    if (!module_computations.count(c)) Fail(inst, "calls a computation outside the module");
  }
  if (inst.opcode() == HloOpcode::kConstant) {
    if (!inst.has_literal()) Fail(inst, "constant has no value");
    if (!inst.literal().shape().Compatible(inst.shape()))
      Fail(inst, "constant's value does not match its shape");
  }
  std::vector<const Shape*> operand_shapes;
  for (const HloInstruction* o : inst.operands()) operand_shapes.push_back(&o->shape());
  std::optional<Shape> inferred;
  try {
    inferred = InferShape(inst.opcode(), operand_shapes, inst.attributes());
  } catch (const ShapeError& e) {
    Fail(inst, e.what());
  }
  // dot and convolution take their result type from the instruction (XLA's
  // preferred_element_type), so only the dimensions are inferred.
  if (inferred && (inst.opcode() == HloOpcode::kDot || inst.opcode() == HloOpcode::kConvolution) &&
      inst.shape().IsArray()) {
    inferred->set_element_type(inst.shape().element_type());
  }
  if (inferred && !inferred->Compatible(inst.shape())) {
    Fail(inst,
         "shape " + inst.shape().Describe() + " differs from the inferred " + inferred->Describe());
  }
  CheckExplicitShape(inst);
  CheckCalledComputations(inst);
  CheckAsync(inst);
  CheckOpcodeRules(inst);
}

void CheckComputation(const HloComputation& c, const HloModule& module,
                      const std::unordered_set<const HloComputation*>& module_computations) {
  if (c.root() == nullptr) throw VerifyError(c.name(), "computation has no root");
  std::unordered_set<std::string> names;
  for (const HloInstruction* inst : c.instructions()) {
    if (inst->parent() != &c) Fail(*inst, "belongs to another computation");
    if (!names.insert(inst->name()).second)
      Fail(*inst, "name is used twice in computation %" + c.name());
    for (const HloInstruction* o : inst->operands()) {
      if (o->parent() != &c || o->is_removed())
        Fail(*inst, "operand %" + o->name() + " is not in this computation");
    }
    for (const HloInstruction* p : inst->control_predecessors()) {
      if (p->parent() != &c || p->is_removed())
        Fail(*inst, "control predecessor %" + p->name() + " is not in this computation");
    }
  }
  if (c.root()->parent() != &c || c.root()->is_removed())
    throw VerifyError(c.name(), "the root %" + c.root()->name() + " is not in the computation");
  // The insertion order may be anything; the graph must be acyclic. A cycle
  // shows as an instruction placed before one of its dependencies.
  {
    std::unordered_set<const HloInstruction*> placed;
    for (const HloInstruction* i : c.MakeInstructionPostOrder()) {
      for (const HloInstruction* o : i->operands()) {
        if (!placed.count(o)) Fail(*i, "is in a cycle through its operand %" + o->name());
      }
      for (const HloInstruction* p : i->control_predecessors()) {
        if (!placed.count(p)) Fail(*i, "is in a cycle of control dependencies");
      }
      placed.insert(i);
    }
  }
  for (int64_t i = 0; i < c.num_parameters(); ++i) {
    if (c.parameter(i) == nullptr)
      throw VerifyError(c.name(), "parameter(" + std::to_string(i) + ") is missing");
  }
  for (const HloInstruction* inst : c.instructions())
    CheckInstruction(*inst, module, module_computations);
}

// The subshape of `shape` at `index`, or null when the index leaves it.
const Shape* SubshapeAt(const Shape& shape, const std::vector<int64_t>& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_shapes_size()) return nullptr;
    s = &s->tuple_shapes(i);
  }
  return s;
}

std::string IndexText(const std::vector<int64_t>& index) {
  std::string s = "{";
  for (size_t i = 0; i < index.size(); ++i) s += (i > 0 ? "," : "") + std::to_string(index[i]);
  return s + "}";
}

// input_output_alias, as XLA checks it: each entry names a parameter of the
// entry and array positions in it and in the result of the same byte size;
// an output or a parameter position is aliased at most once.
void CheckInputOutputAlias(const HloModule& module) {
  const HloComputation& entry = *module.entry();
  std::set<std::vector<int64_t>> outputs;
  std::set<std::pair<int64_t, std::vector<int64_t>>> inputs;
  for (const InputOutputAlias& a : module.config().input_output_alias) {
    const std::string what = "input_output_alias " + IndexText(a.output_index) + ": (" +
                             std::to_string(a.parameter) + ", " + IndexText(a.parameter_index) +
                             ")";
    if (a.parameter < 0 || a.parameter >= entry.num_parameters()) {
      throw VerifyError(entry.name(), what + " names a parameter the entry does not have");
    }
    const Shape* in = SubshapeAt(entry.parameter(a.parameter)->shape(), a.parameter_index);
    const Shape* out = SubshapeAt(entry.root()->shape(), a.output_index);
    if (in == nullptr || !in->IsArray()) {
      Fail(*entry.parameter(a.parameter), what + ": no array at that index of the parameter");
    }
    if (out == nullptr || !out->IsArray()) {
      Fail(*entry.root(), what + ": no array at that index of the result");
    }
    const int64_t in_bytes = in->element_count() * StorageBytes(in->element_type());
    const int64_t out_bytes = out->element_count() * StorageBytes(out->element_type());
    if (in_bytes != out_bytes) {
      Fail(*entry.root(), what + " aliases " + in->ToString(false) + " (" +
                              std::to_string(in_bytes) + " bytes) with " + out->ToString(false) +
                              " (" + std::to_string(out_bytes) + " bytes)");
    }
    if (!outputs.insert(a.output_index).second)
      Fail(*entry.root(), what + ": that output is aliased twice");
    if (!inputs.insert({a.parameter, a.parameter_index}).second)
      Fail(*entry.parameter(a.parameter), what + ": that parameter position is aliased twice");
  }
}

}  // namespace

void Verify(const HloModule& module) {
  if (module.entry() == nullptr)
    throw VerifyError(module.name(), "module has no entry computation");
  std::unordered_set<const HloComputation*> computations;
  std::unordered_set<std::string> names;
  for (const auto& c : module.computations()) {
    computations.insert(c.get());
    if (!names.insert(c->name()).second)
      throw VerifyError(c->name(), "computation name is used twice");
  }
  CheckCallDepth(module);
  for (const auto& c : module.computations()) CheckComputation(*c, module, computations);
  if (module.has_schedule()) module.schedule().Verify(module);
  CheckInputOutputAlias(module);
  const ModuleConfig& cfg = module.config();
  const HloComputation& entry = *module.entry();
  if (cfg.entry_parameter_layouts) {
    const auto& params = *cfg.entry_parameter_layouts;
    if (static_cast<int64_t>(params.size()) != entry.num_parameters()) {
      throw VerifyError(entry.name(), "entry_computation_layout lists " +
                                          std::to_string(params.size()) +
                                          " parameters but the entry has " +
                                          std::to_string(entry.num_parameters()));
    }
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      if (!params[i].Compatible(entry.parameter(i)->shape())) {
        Fail(*entry.parameter(i), "entry_computation_layout gives parameter " + std::to_string(i) +
                                      " the shape " + params[i].Describe() + " but it is " +
                                      entry.parameter(i)->shape().Describe());
      }
    }
    if (cfg.entry_result_layout && !cfg.entry_result_layout->Compatible(entry.root()->shape())) {
      Fail(*entry.root(), "entry_computation_layout gives the result the shape " +
                              cfg.entry_result_layout->Describe() + " but the root is " +
                              entry.root()->shape().Describe());
    }
  }
}

}  // namespace uir::hlo
