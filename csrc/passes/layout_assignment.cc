#include "passes/layout_assignment.h"

#include <algorithm>
#include <unordered_set>

#include "hlo/builder.h"
#include "passes/fusion/fusion_utils.h"
#include "support/float_format.h"

namespace uir::passes {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

namespace {

bool SameLayout(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes_size() != b.tuple_shapes_size()) return false;
    for (int64_t i = 0; i < a.tuple_shapes_size(); ++i)
      if (!SameLayout(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return true;
  return a.has_layout() && b.has_layout() && a.layout().minor_to_major == b.layout().minor_to_major;
}

bool IsDefault(const Shape& s) {
  return s.has_layout() &&
         s.layout().minor_to_major == Shape::DefaultLayout(s.rank()).minor_to_major;
}

// `x` in the layouts of `want` (same logical shape): itself, a copy, or a
// tuple of relaid-out elements.
HloInstruction* Relayout(HloComputation* c, HloInstruction* x, const Shape& want) {
  if (SameLayout(x->shape(), want)) return x;
  hlo::ComputationBuilder b(c);
  if (x->shape().IsTuple()) {
    std::vector<HloInstruction*> elements;
    for (int64_t i = 0; i < x->shape().tuple_shapes_size(); ++i)
      elements.push_back(Relayout(c, b.GetTupleElement(x, i), want.tuple_shapes(i)));
    return b.Tuple(elements);
  }
  Shape target = x->shape();
  target.set_layout(want.layout());
  return b.Add(HloOpcode::kCopy, {x}, {}, target);
}

void Constrain(HloInstruction* user, int64_t k, const Shape& want) {
  HloInstruction* op = user->operand(k);
  if (!SameLayout(op->shape(), want)) user->ReplaceOperand(k, Relayout(user->parent(), op, want));
}

HloComputation* Callee(const HloInstruction& i, AttrKey key) {
  return i.attributes().Get<HloComputation*>(key);
}

std::vector<HloComputation*> Branches(const HloInstruction& i) {
  if (auto b = i.attributes().GetOr<std::vector<HloComputation*>>(AttrKey::kBranchComputations))
    return *b;
  return {Callee(i, AttrKey::kTrueComputation), Callee(i, AttrKey::kFalseComputation)};
}

// Whether a BLAS call reads operand k of a dot as it is laid out. Dots
// of other element types (integers, complex numbers, mixed types) are
// packed by the runtime's general dot whatever their layout: any will do.
bool BlasTakes(const HloInstruction& dot, int64_t k) {
  const Shape& s = dot.operand(k)->shape();
  const PrimitiveType t = dot.shape().element_type();
  const bool blas_type = t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsNarrowFloat(t);
  if (!blas_type || dot.operand(0)->shape().element_type() != t ||
      dot.operand(1)->shape().element_type() != t) {
    return true;
  }
  const auto batch = dot.attributes().GetOr<std::vector<int64_t>>(k == 0 ? AttrKey::kLhsBatchDims
                                                                         : AttrKey::kRhsBatchDims);
  if (s.rank() == 2 && (!batch || batch->empty()))
    return s.has_layout();  // row- or column-major: a transpose flag
  return IsDefault(s);
}

// An elementwise op's operands of full rank share its layout.
const HloInstruction* FullRankOperand(const HloInstruction& i) {
  for (const HloInstruction* o : i.operands())
    if (o->shape().IsArray() && o->shape().rank() == i.shape().rank()) return o;
  return nullptr;
}

void SetRootLayout(HloComputation* c, const Shape& want) {
  c->set_root(Relayout(c, c->root(), want));
}

void AssignInstruction(HloInstruction* i) {
  const HloOpcode op = i->opcode();
  if (hlo::IsElementwise(op) && i->shape().IsArray() && i->shape().rank() > 0) {
    const HloInstruction* first = FullRankOperand(*i);
    if (first != nullptr && first->shape().has_layout()) {
      i->mutable_shape().set_layout(first->shape().layout());
    } else {
      i->mutable_shape().FillMissingLayouts();
    }
    for (int64_t k = 0; k < i->operand_count(); ++k) {
      if (i->operand(k)->shape().rank() == i->shape().rank()) Constrain(i, k, i->shape());
    }
    return;
  }
  switch (op) {
    case HloOpcode::kGetTupleElement:
      i->mutable_shape() =
          i->operand(0)->shape().tuple_shapes(i->attributes().Get<int64_t>(AttrKey::kIndex));
      return;
    case HloOpcode::kTuple: {
      std::vector<Shape> shapes;
      for (const HloInstruction* o : i->operands()) shapes.push_back(o->shape());
      i->mutable_shape() = Shape::Tuple(shapes);
      return;
    }
    case HloOpcode::kDot:
      for (int64_t k = 0; k < 2; ++k) {
        if (!BlasTakes(*i, k)) {
          Shape want = i->operand(k)->shape();
          want.set_layout(Shape::DefaultLayout(want.rank()));
          Constrain(i, k, want);
        }
      }
      i->mutable_shape().set_layout(Shape::DefaultLayout(i->shape().rank()));
      return;
    case HloOpcode::kFusion:
    case HloOpcode::kCall: {
      HloComputation* callee =
          Callee(*i, op == HloOpcode::kFusion ? AttrKey::kCalls : AttrKey::kToApply);
      for (int64_t k = 0; k < i->operand_count(); ++k)
        Constrain(i, k, callee->parameter(k)->shape());
      i->mutable_shape() = callee->root()->shape();
      return;
    }
    case HloOpcode::kWhile: {
      HloComputation* body = Callee(*i, AttrKey::kBody);
      HloComputation* cond = Callee(*i, AttrKey::kCondition);
      const Shape state = body->parameter(0)->shape();
      if (!SameLayout(body->root()->shape(), state)) SetRootLayout(body, state);
      if (!SameLayout(cond->parameter(0)->shape(), state)) {
        cond->parameter(0)->mutable_shape() = state;
        for (HloInstruction* x : cond->MakeInstructionPostOrder()) {
          if (x->opcode() != HloOpcode::kParameter) AssignInstruction(x);
        }
      }
      Constrain(i, 0, state);
      i->mutable_shape() = state;
      return;
    }
    case HloOpcode::kConditional: {
      const std::vector<HloComputation*> branches = Branches(*i);
      for (size_t b = 0; b < branches.size(); ++b) {
        Constrain(i, static_cast<int64_t>(b) + 1, branches[b]->parameter(0)->shape());
        if (b > 0 && !SameLayout(branches[b]->root()->shape(), branches[0]->root()->shape()))
          SetRootLayout(branches[b], branches[0]->root()->shape());
      }
      i->mutable_shape() = branches[0]->root()->shape();
      return;
    }
    case HloOpcode::kCopyStart: {
      // (destination, source, context): the source is the operand as it
      // is laid out; the destination keeps its layout.
      Shape s = i->shape();
      if (s.IsTuple() && s.tuple_shapes_size() >= 2) {
        s.mutable_tuple_shapes()[1] = i->operand(0)->shape();
        s.FillMissingLayouts();
        i->mutable_shape() = s;
      }
      return;
    }
    case HloOpcode::kCopyDone: {
      // The done hands on the start's destination as it is laid out (a
      // byte copy): a different layout declared for it becomes a relayout
      // after it.
      const Shape& start = i->operand(0)->shape();
      if (!start.IsTuple() || start.tuple_shapes_size() < 1) return;
      Shape declared = i->shape();
      declared.FillMissingLayouts();
      i->mutable_shape() = start.tuple_shapes(0);
      if (SameLayout(declared, i->shape())) return;
      const std::vector<HloInstruction*> users = i->users();
      HloInstruction* relaid = Relayout(i->parent(), i, declared);
      for (HloInstruction* u : users) {
        for (int64_t k = 0; k < u->operand_count(); ++k)
          if (u->operand(k) == i) u->ReplaceOperand(k, relaid);
      }
      if (i->parent()->root() == i) i->parent()->set_root(relaid);
      return;
    }
    case HloOpcode::kCustomCall:
      if (auto want =
              i->attributes().GetOr<std::vector<Shape>>(AttrKey::kOperandLayoutConstraints)) {
        for (int64_t k = 0; k < i->operand_count() && k < static_cast<int64_t>(want->size()); ++k)
          Constrain(i, k, (*want)[k]);
      }
      i->mutable_shape().FillMissingLayouts();
      return;
    default:
      i->mutable_shape().FillMissingLayouts();
  }
}

// The entry result must be laid out as `want`: elementwise producers only
// the root reads take the layout themselves, anything else is copied.
void PushUp(HloInstruction* x, const Shape& want, HloInstruction* user, int64_t k) {
  if (SameLayout(x->shape(), want)) return;
  const auto& uses = user->operands();
  if (x->shape().IsArray() && hlo::IsElementwise(x->opcode()) && x->user_count() == 1 &&
      std::count(uses.begin(), uses.end(), x) == 1 && x->shape().rank() > 0) {
    x->mutable_shape().set_layout(want.layout());
    for (int64_t j = 0; j < x->operand_count(); ++j) {
      if (x->operand(j)->shape().rank() == x->shape().rank()) PushUp(x->operand(j), want, x, j);
    }
    return;
  }
  user->ReplaceOperand(k, Relayout(x->parent(), x, want));
}

void ConstrainResult(HloComputation* entry, const Shape& want) {
  HloInstruction* root = entry->root();
  if (SameLayout(root->shape(), want)) return;
  if (root->opcode() == HloOpcode::kTuple && want.IsTuple() &&
      want.tuple_shapes_size() == root->operand_count()) {
    for (int64_t k = 0; k < root->operand_count(); ++k)
      PushUp(root->operand(k), want.tuple_shapes(k), root, k);
    std::vector<Shape> shapes;
    for (const HloInstruction* o : root->operands()) shapes.push_back(o->shape());
    root->mutable_shape() = Shape::Tuple(shapes);
    return;
  }
  if (root->shape().IsArray() && hlo::IsElementwise(root->opcode()) && root->users().empty() &&
      root->shape().rank() > 0) {
    root->mutable_shape().set_layout(want.layout());
    for (int64_t j = 0; j < root->operand_count(); ++j) {
      if (root->operand(j)->shape().rank() == root->shape().rank())
        PushUp(root->operand(j), want, root, j);
    }
    return;
  }
  SetRootLayout(entry, want);
}

// Computations laid out here: all but fused ones (laid out with their fusion).
std::vector<HloComputation*> Targets(const hlo::HloModule& module) {
  const auto fused = fusion::FusedComputations(module);
  std::vector<HloComputation*> out;
  for (HloComputation* c : module.MakeComputationPostOrder())
    if (!fused.count(c)) out.push_back(c);
  return out;
}

}  // namespace

bool LayoutAssignment::Run(hlo::HloModule& module) {
  const uint64_t before = module.Fingerprint();
  HloComputation* entry = module.entry();
  const hlo::ModuleConfig& config = module.config();
  if (config.entry_parameter_layouts &&
      static_cast<int64_t>(config.entry_parameter_layouts->size()) == entry->num_parameters()) {
    for (int64_t k = 0; k < entry->num_parameters(); ++k) {
      const Shape& want = (*config.entry_parameter_layouts)[k];
      HloInstruction* param = entry->parameter(k);
      if (!want.Compatible(param->shape())) continue;
      Shape declared = param->shape();
      declared.FillMissingLayouts();
      param->mutable_shape() = want;
      if (SameLayout(declared, want)) continue;
      // A bitcast reads the bytes as they are laid out: it keeps reading
      // the parameter in the layout the instruction declared.
      const std::vector<HloInstruction*> users = param->users();
      for (HloInstruction* u : users) {
        if (u->opcode() != HloOpcode::kBitcast) continue;
        u->ReplaceOperand(0, Relayout(entry, param, declared));
      }
    }
  }
  for (HloComputation* c : Targets(module)) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) {
      if (i->opcode() == HloOpcode::kParameter) {
        i->mutable_shape().FillMissingLayouts();
        continue;
      }
      AssignInstruction(i);
    }
  }
  if (config.entry_result_layout && config.entry_result_layout->Compatible(entry->root()->shape()))
    ConstrainResult(entry, *config.entry_result_layout);
  return module.Fingerprint() != before;
}

std::vector<std::string> LayoutProblems(const hlo::HloModule& module) {
  std::vector<std::string> out;
  const auto where = [](const HloInstruction& i) {
    return "%" + i.name() + " in " + i.parent()->name() + ": ";
  };
  for (HloComputation* c : Targets(module)) {
    for (const HloInstruction* i : c->instructions()) {
      Shape filled = i->shape();
      filled.FillMissingLayouts();
      if (!SameLayout(filled, i->shape())) out.push_back(where(*i) + "an array without a layout");
      if (hlo::IsElementwise(i->opcode()) && i->shape().IsArray()) {
        for (const HloInstruction* o : i->operands()) {
          if (o->shape().rank() == i->shape().rank() && !SameLayout(o->shape(), i->shape()))
            out.push_back(where(*i) + "operand %" + o->name() + " is in another layout");
        }
      }
      if (i->opcode() == HloOpcode::kDot) {
        for (int64_t k = 0; k < 2; ++k)
          if (!BlasTakes(*i, k))
            out.push_back(where(*i) + "a BLAS call cannot read operand " + std::to_string(k));
      }
      if (i->opcode() == HloOpcode::kFusion || i->opcode() == HloOpcode::kCall) {
        const HloComputation* callee =
            Callee(*i, i->opcode() == HloOpcode::kFusion ? AttrKey::kCalls : AttrKey::kToApply);
        for (int64_t k = 0; k < i->operand_count(); ++k) {
          if (!SameLayout(i->operand(k)->shape(), callee->parameter(k)->shape()))
            out.push_back(where(*i) + "operand " + std::to_string(k) +
                          " is laid out unlike the callee's parameter");
        }
      }
      if (i->opcode() == HloOpcode::kWhile) {
        const Shape& state = Callee(*i, AttrKey::kBody)->parameter(0)->shape();
        if (!SameLayout(i->operand(0)->shape(), state) || !SameLayout(i->shape(), state) ||
            !SameLayout(Callee(*i, AttrKey::kBody)->root()->shape(), state))
          out.push_back(where(*i) + "the loop state is laid out differently across the loop");
      }
    }
  }
  const auto& want = module.config().entry_result_layout;
  if (want && want->Compatible(module.entry()->root()->shape()) &&
      !SameLayout(*want, module.entry()->root()->shape()))
    out.push_back("the entry result is not laid out as entry_computation_layout says");
  return out;
}

}  // namespace uir::passes
