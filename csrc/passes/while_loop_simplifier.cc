#include "passes/while_loop_simplifier.h"

#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "hlo/builder.h"
#include "passes/call_inliner.h"
#include "passes/dce.h"
#include "support/primitive_type.h"

namespace uir::passes {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

HloComputation* Body(const HloInstruction& w) {
  return w.attributes().Get<HloComputation*>(AttrKey::kBody);
}
HloComputation* Condition(const HloInstruction& w) {
  return w.attributes().Get<HloComputation*>(AttrKey::kCondition);
}
int64_t Index(const HloInstruction& gte) { return gte.attributes().Get<int64_t>(AttrKey::kIndex); }

// True if every use of `value` is a get-tuple-element (and it is not the root).
bool OnlyReadThroughGte(const HloInstruction& value) {
  if (value.parent() != nullptr && value.parent()->root() == &value) return false;
  for (const HloInstruction* u : value.users())
    if (u->opcode() != HloOpcode::kGetTupleElement) return false;
  return true;
}

// The state elements that `start` depends on through the body's parameter.
void ElementsRead(const HloInstruction* start, const HloInstruction* param,
                  std::unordered_set<const HloInstruction*>& seen, std::set<int64_t>& out) {
  std::vector<const HloInstruction*> work = {start};
  while (!work.empty()) {
    const HloInstruction* i = work.back();
    work.pop_back();
    if (!seen.insert(i).second) continue;
    if (i->opcode() == HloOpcode::kGetTupleElement && i->operand(0) == param) {
      out.insert(Index(*i));
      continue;
    }
    for (const HloInstruction* o : i->operands()) work.push_back(o);
  }
}

bool RemoveDeadState(HloInstruction* w) {
  HloComputation* body = Body(*w);
  HloComputation* cond = Condition(*w);
  HloInstruction* body_param = body->parameter(0);
  HloInstruction* cond_param = cond->parameter(0);
  HloInstruction* root = body->root();
  if (root->opcode() != HloOpcode::kTuple || !OnlyReadThroughGte(*w) ||
      !OnlyReadThroughGte(*body_param) || !OnlyReadThroughGte(*cond_param)) {
    return false;
  }
  const int64_t n = root->operand_count();
  std::set<int64_t> live;
  for (const HloInstruction* u : w->users()) live.insert(Index(*u));
  for (const HloInstruction* u : cond_param->users()) live.insert(Index(*u));
  // Side effects in the body keep what they read.
  std::unordered_set<const HloInstruction*> seen;
  for (const HloInstruction* i : body->instructions()) {
    if (i->HasSideEffect()) ElementsRead(i, body_param, seen, live);
  }
  for (std::set<int64_t> frontier = live; !frontier.empty();) {
    std::set<int64_t> next;
    for (int64_t k : frontier) {
      std::set<int64_t> read;
      ElementsRead(root->operand(k), body_param, seen, read);
      for (int64_t r : read)
        if (live.insert(r).second) next.insert(r);
    }
    frontier = std::move(next);
  }
  if (static_cast<int64_t>(live.size()) == n) return false;

  std::unordered_map<int64_t, int64_t> renumber;
  std::vector<hlo::Shape> shapes;
  for (int64_t k : live) {
    renumber[k] = static_cast<int64_t>(shapes.size());
    shapes.push_back(w->shape().tuple_shapes(k));
  }
  const hlo::Shape state = hlo::Shape::Tuple(shapes);

  // Body: the smaller root, dead work removed, reads renumbered.
  std::vector<HloInstruction*> kept;
  for (int64_t k : live) kept.push_back(root->operand(k));
  hlo::ComputationBuilder in_body(body);
  body->set_root(in_body.Tuple(kept));
  body->RemoveInstructionAndUnusedOperands(root);
  RemoveDeadInstructions(*body);
  for (HloInstruction* computation_param : {body_param, cond_param}) {
    for (HloInstruction* gte : computation_param->users()) {
      gte->mutable_attributes().Set(AttrKey::kIndex, renumber.at(Index(*gte)));
    }
    computation_param->mutable_shape() = state;
  }

  // The loop: a smaller initial tuple, readers renumbered.
  HloComputation* parent = w->parent();
  hlo::ComputationBuilder outside(parent);
  HloInstruction* init = w->operand(0);
  std::vector<HloInstruction*> elements;
  for (int64_t k : live) {
    elements.push_back(init->opcode() == HloOpcode::kTuple ? init->operand(k)
                                                           : outside.GetTupleElement(init, k));
  }
  w->ReplaceOperand(0, outside.Tuple(elements));
  w->mutable_shape() = state;
  for (HloInstruction* gte : w->users())
    gte->mutable_attributes().Set(AttrKey::kIndex, renumber.at(Index(*gte)));
  if (init->users().empty() && init != parent->root() && !init->HasSideEffect())
    parent->RemoveInstructionAndUnusedOperands(init);
  return true;
}

std::optional<int64_t> ScalarInt(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kConstant || !i.shape().IsArray() || i.shape().rank() != 0 ||
      !IsInteger(i.shape().element_type()))
    return std::nullopt;
  if (IsUnsigned(i.shape().element_type())) {
    const uint64_t v = i.literal().GetUint64(0);
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  return i.literal().GetInt64(0);
}

bool Holds(hlo::ComparisonDirection direction, int64_t a, int64_t b) {
  using D = hlo::ComparisonDirection;
  switch (direction) {
    case D::kLt:
      return a < b;
    case D::kLe:
      return a <= b;
    case D::kGt:
      return a > b;
    case D::kGe:
      return a >= b;
    case D::kEq:
      return a == b;
    case D::kNe:
      return a != b;
  }
  return false;
}

// The direction with the operands swapped (a < b  is  b > a).
hlo::ComparisonDirection Mirrored(hlo::ComparisonDirection direction) {
  using D = hlo::ComparisonDirection;
  switch (direction) {
    case D::kLt:
      return D::kGt;
    case D::kGt:
      return D::kLt;
    case D::kLe:
      return D::kGe;
    case D::kGe:
      return D::kLe;
    default:
      return direction;  // EQ, NE
  }
}

// 0 or 1 when the loop provably runs that many times, else nullopt.
std::optional<int> ShortTripCount(const HloInstruction& w) {
  const HloComputation* cond = Condition(w);
  const HloComputation* body = Body(w);
  const HloInstruction* cmp = cond->root();
  const HloInstruction* init = w.operand(0);
  const HloInstruction* root = body->root();
  if (cmp->opcode() != HloOpcode::kCompare || init->opcode() != HloOpcode::kTuple ||
      root->opcode() != HloOpcode::kTuple)
    return std::nullopt;
  hlo::ComparisonDirection direction =
      cmp->attributes().GetEnum<hlo::ComparisonDirection>(AttrKey::kDirection);
  const HloInstruction* var = cmp->operand(0);
  std::optional<int64_t> limit = ScalarInt(*cmp->operand(1));
  if (!limit) {  // constant on the left: mirror the comparison
    var = cmp->operand(1);
    limit = ScalarInt(*cmp->operand(0));
    direction = Mirrored(direction);
  }
  if (!limit || var->opcode() != HloOpcode::kGetTupleElement ||
      var->operand(0) != cond->parameter(0))
    return std::nullopt;
  const int64_t k = Index(*var);
  const std::optional<int64_t> start = ScalarInt(*init->operand(k));
  if (!start) return std::nullopt;
  if (!Holds(direction, *start, *limit)) return 0;
  const HloInstruction* next = root->operand(k);
  if (next->opcode() != HloOpcode::kAdd) return std::nullopt;
  std::optional<int64_t> step;
  for (int side = 0; side < 2; ++side) {
    const HloInstruction* v = next->operand(side);
    if (v->opcode() == HloOpcode::kGetTupleElement && v->operand(0) == body->parameter(0) &&
        Index(*v) == k)
      step = ScalarInt(*next->operand(1 - side));
  }
  if (!step) return std::nullopt;
  // The next value must fit the type, or the comparison would see a wrap.
  const PrimitiveType type = var->shape().element_type();
  const int bits = BitWidth(type);
  if (bits >= 64) return std::nullopt;
  const int64_t lo = IsUnsigned(type) ? 0 : -(int64_t{1} << (bits - 1));
  const int64_t hi = IsUnsigned(type) ? (int64_t{1} << bits) - 1 : (int64_t{1} << (bits - 1)) - 1;
  const int64_t after = *start + *step;
  if (after < lo || after > hi) return std::nullopt;
  if (!Holds(direction, after, *limit)) return 1;
  return std::nullopt;
}

bool Simplifiable(const HloInstruction& w,
                  const std::unordered_map<const HloComputation*, int>& calls) {
  if (!w.control_predecessors().empty() || !w.control_successors().empty()) return false;
  const HloComputation* body = Body(w);
  const HloComputation* cond = Condition(w);
  if (body == cond || calls.at(body) != 1 || calls.at(cond) != 1) return false;
  for (const HloInstruction* i : cond->instructions())
    if (i->HasSideEffect()) return false;
  return w.shape().IsTuple();
}

}  // namespace

bool WhileLoopSimplifier::Run(hlo::HloModule& module) {
  std::unordered_map<const HloComputation*, int> calls;
  std::vector<HloInstruction*> loops;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    for (HloInstruction* i : c->instructions()) {
      for (const HloComputation* callee : i->called_computations()) ++calls[callee];
      if (i->opcode() == HloOpcode::kWhile) loops.push_back(i);
    }
  }
  bool changed = false;
  for (HloInstruction* w : loops) {
    if (!Simplifiable(*w, calls)) continue;
    HloComputation* parent = w->parent();
    const std::optional<int> trips = ShortTripCount(*w);
    if (trips) {
      HloInstruction* result = w->operand(0);
      if (*trips == 1) result = InlineComputation(*Body(*w), {w->operand(0)}, *parent);
      parent->ReplaceInstruction(w, result);
      changed = true;
      continue;
    }
    changed |= RemoveDeadState(w);
  }
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
