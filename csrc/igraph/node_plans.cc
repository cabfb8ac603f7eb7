// What the backend's thunk emitter (and the Kernel Graph's own runner) asks
// of a node: whether control flow runs in place, a custom call's frame.
#include <algorithm>
#include <functional>
#include <utility>

#include "eval/custom_call.h"
#include "igraph/kernel_graph.h"
#include "igraph/tile_program.h"
#include "support/error.h"

namespace uir::igraph {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

bool SamePlaces(const std::vector<DramTensor>& a, const std::vector<DramTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].allocation != b[i].allocation || a[i].offset != b[i].offset) return false;
  }
  return true;
}

const KernelGraph* SubgraphFor(const KernelNode& n, const hlo::HloComputation* c) {
  for (const KernelGraph& sub : n.subgraphs) {
    if (c != nullptr && sub.name() == c->name()) return &sub;
  }
  return nullptr;
}

// Whether `callee` can run in place: buffer assignment put its parameters
// and root where the caller's operands and result are.
bool CallsInPlace(const buffers::BufferAssignment& ba, const hlo::HloComputation& callee,
                  const std::vector<const HloInstruction*>& args, const HloInstruction& result) {
  if (callee.num_parameters() != static_cast<int64_t>(args.size())) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!SamePlaces(ValueLeaves(ba, callee.parameter(static_cast<int64_t>(i))),
                    ValueLeaves(ba, args[i]))) {
      return false;
    }
  }
  return SamePlaces(ValueLeaves(ba, callee.root()), ValueLeaves(ba, &result));
}
}  // namespace

std::optional<WhileLoop> InPlaceWhile(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kWhile) {
    return std::nullopt;
  }
  const HloInstruction& inst = *n.instruction;
  auto computation = [&](hlo::AttrKey key) {
    auto c = inst.attributes().GetOr<hlo::HloComputation*>(key);
    return c ? *c : nullptr;
  };
  const hlo::HloComputation* cond = computation(hlo::AttrKey::kCondition);
  const hlo::HloComputation* body = computation(hlo::AttrKey::kBody);
  WhileLoop loop;
  loop.condition = SubgraphFor(n, cond);
  loop.body = SubgraphFor(n, body);
  if (loop.condition == nullptr || loop.body == nullptr ||
      !CallsInPlace(ba, *body, {inst.operand(0)}, inst) ||
      !SamePlaces(ValueLeaves(ba, cond->parameter(0)), ValueLeaves(ba, &inst)) ||
      !SamePlaces(ValueLeaves(ba, inst.operand(0)), ValueLeaves(ba, &inst))) {
    return std::nullopt;
  }
  const std::vector<DramTensor> predicate = ValueLeaves(ba, cond->root());
  if (predicate.size() != 1) return std::nullopt;
  loop.predicate = predicate[0];
  return loop;
}

std::optional<Branches> InPlaceBranches(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kConditional) {
    return std::nullopt;
  }
  const HloInstruction& inst = *n.instruction;
  std::vector<hlo::HloComputation*> computations;
  if (auto b = inst.attributes().GetOr<std::vector<hlo::HloComputation*>>(
          hlo::AttrKey::kBranchComputations)) {
    computations = *b;
  } else {
    for (hlo::AttrKey key : {hlo::AttrKey::kTrueComputation, hlo::AttrKey::kFalseComputation}) {
      auto c = inst.attributes().GetOr<hlo::HloComputation*>(key);
      computations.push_back(c ? *c : nullptr);
    }
  }
  Branches out;
  for (size_t i = 0; i < computations.size(); ++i) {
    const KernelGraph* g = SubgraphFor(n, computations[i]);
    if (g == nullptr ||
        !CallsInPlace(ba, *computations[i], {inst.operand(static_cast<int64_t>(i) + 1)}, inst)) {
      return std::nullopt;
    }
    out.graphs.push_back(g);
  }
  const std::vector<DramTensor> selector = ValueLeaves(ba, inst.operand(0));
  if (selector.size() != 1) return std::nullopt;
  out.selector = selector[0];
  return out;
}

const KernelGraph* InPlaceCall(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kCall) {
    return nullptr;
  }
  const HloInstruction& inst = *n.instruction;
  const auto called = inst.called_computations();
  if (called.size() != 1) return nullptr;
  const KernelGraph* callee = SubgraphFor(n, called[0]);
  std::vector<const HloInstruction*> args(inst.operands().begin(), inst.operands().end());
  if (callee == nullptr || !CallsInPlace(ba, *called[0], args, inst)) return nullptr;
  return callee;
}

namespace {

// A value of `shape` over array leaves counted from `next` (data left
// null); false when a leaf is missing.
bool CallBufferOf(const hlo::Shape& shape, size_t leaves, size_t& next, CallBuffer& b) {
  if (shape.IsTuple()) {
    b.kind = CallBuffer::Kind::kTuple;
    for (const hlo::Shape& s : shape.tuple_shapes()) {
      b.elements.emplace_back();
      if (!CallBufferOf(s, leaves, next, b.elements.back())) return false;
    }
  } else if (shape.IsArray()) {
    if (next >= leaves) return false;
    ++next;
    b.type = shape.element_type();
    b.dims = shape.dimensions();
  } else {
    b.kind = CallBuffer::Kind::kToken;
  }
  return true;
}

}  // namespace

std::optional<CallFrame> CustomCallFrameOf(const KernelNode& n) {
  if (n.kind != NodeKind::kCustomCall || n.instruction == nullptr) return std::nullopt;
  const HloInstruction& inst = *n.instruction;
  for (const std::vector<DramTensor>* side : {&n.inputs, &n.outputs}) {
    for (const DramTensor& t : *side) {
      if (!IsRowMajor(t.shape)) return std::nullopt;
    }
  }
  if (inst.shape().IsBuffer()) return std::nullopt;
  CallFrame frame;
  frame.target = n.op;
  frame.call = inst.name();
  frame.api = eval::CustomCallApiOf(inst);
  if (const auto config =
          inst.attributes().GetOr<hlo::BackendConfig>(hlo::AttrKey::kBackendConfig)) {
    frame.opaque = config->text;
  }
  size_t next = 0;
  for (const HloInstruction* o : inst.operands()) {
    if (o->shape().IsBuffer()) return std::nullopt;
    frame.operands.emplace_back();
    if (!CallBufferOf(o->shape(), n.inputs.size(), next, frame.operands.back())) {
      return std::nullopt;
    }
  }
  if (next != n.inputs.size()) return std::nullopt;
  next = 0;
  if (!CallBufferOf(inst.shape(), n.outputs.size(), next, frame.result) ||
      next != n.outputs.size()) {
    return std::nullopt;
  }
  return frame;
}

void ForEachCallLeaf(CallFrame& frame, const std::function<void(CallBuffer&)>& fn) {
  std::function<void(CallBuffer&)> visit = [&](CallBuffer& b) {
    if (b.IsTuple()) {
      for (CallBuffer& e : b.elements) visit(e);
    } else if (b.IsArray()) {
      fn(b);
    }
  };
  for (CallBuffer& o : frame.operands) visit(o);
  visit(frame.result);
}

}  // namespace uir::igraph
