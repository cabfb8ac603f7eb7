#include "codegen/collective_plans.h"

#include <algorithm>
#include <set>

#include "codegen/library_plans.h"
#include "hlo/collective_groups.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

using hlo::AttrKey;
using hlo::HloInstruction;
using hlo::HloOpcode;
using Op = runtime::CollectivePlan::Op;

runtime::BufferSlice SliceOf(const igraph::DramTensor& t) {
  return {t.allocation, t.offset, t.bytes};
}

// Physical major-to-minor order of `shape`'s dimensions.
std::vector<int64_t> MajorToMinor(const hlo::Shape& shape) {
  std::vector<int64_t> m2m = shape.has_layout()
                                 ? shape.layout().minor_to_major
                                 : hlo::Shape::DefaultLayout(shape.rank()).minor_to_major;
  std::reverse(m2m.begin(), m2m.end());
  return m2m;
}

// [outer, dim, inner] of `shape` around logical dimension `d` (-1: all of
// it as `dim`).
void Around(const hlo::Shape& shape, int64_t d, runtime::CollectivePlan& plan) {
  plan.outer = 1;
  plan.dim = shape.element_count();
  plan.inner = 1;
  if (d < 0) return;
  const std::vector<int64_t> order = MajorToMinor(shape);
  bool before = true;
  for (int64_t axis : order) {
    const int64_t size = shape.dimensions()[static_cast<size_t>(axis)];
    if (axis == d) {
      plan.dim = size;
      before = false;
    } else if (before) {
      plan.outer *= size;
    } else {
      plan.inner *= size;
    }
  }
}

int64_t DimensionOf(const HloInstruction& inst) {
  if (auto d = inst.attributes().GetOr<std::vector<int64_t>>(AttrKey::kDimensions);
      d && !d->empty()) {
    return (*d)[0];
  }
  return inst.attributes().GetOr<int64_t>(AttrKey::kSplitDimension).value_or(-1);
}

bool SameSlice(const igraph::DramTensor& a, const igraph::DramTensor& b) {
  return a.allocation == b.allocation && a.offset == b.offset && a.bytes == b.bytes;
}

// The collective an async-start wraps: the root of its computation, taking
// the computation's parameters in order; null otherwise.
const HloInstruction* WrappedCollective(const HloInstruction& start) {
  if (start.opcode() != HloOpcode::kAsyncStart || start.called_computations().size() != 1) {
    return nullptr;
  }
  const hlo::HloComputation* c = start.called_computations()[0];
  const HloInstruction* root = c->root();
  if (root->operand_count() != c->num_parameters()) return nullptr;
  for (int64_t i = 0; i < root->operand_count(); ++i) {
    const HloInstruction* o = root->operand(i);
    if (o->opcode() != HloOpcode::kParameter || o->parameter_number() != i) return nullptr;
  }
  return root;
}

int64_t ArrayLeaves(const hlo::Shape& shape) {
  if (shape.IsArray()) return 1;
  int64_t n = 0;
  if (shape.IsTuple()) {
    for (const hlo::Shape& s : shape.tuple_shapes()) n += ArrayLeaves(s);
  }
  return n;
}

}  // namespace

std::optional<NodeCollective> CollectiveOf(const igraph::KernelNode& node, int participants,
                                           int partitions, int64_t* next_id, std::string* refused) {
  NodeCollective out;
  std::vector<runtime::CollectiveThunk::Part>& parts = out.parts;
  auto refuse = [&](std::string why) -> std::optional<NodeCollective> {
    *refused = std::move(why);
    return std::nullopt;
  };
  if (node.instruction == nullptr) return refuse("no instruction");
  const HloInstruction* wrapped = WrappedCollective(*node.instruction);
  const HloInstruction* inst = wrapped != nullptr ? wrapped : node.instruction;
  const HloOpcode opcode = inst->opcode();
  Op op;
  switch (opcode) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
      op = Op::kAllReduce;
      break;
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
      op = Op::kAllGather;
      break;
    case HloOpcode::kReduceScatter:
      op = Op::kReduceScatter;
      break;
    case HloOpcode::kAllToAll:
      op = Op::kAllToAll;
      break;
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      op = Op::kPermute;
      break;
    case HloOpcode::kCollectiveBroadcast:
      op = Op::kBroadcast;
      break;
    case HloOpcode::kReplicaId:
      op = Op::kReplicaId;
      break;
    case HloOpcode::kPartitionId:
      op = Op::kPartitionId;
      break;
    default:
      return refuse(wrapped != nullptr || node.instruction->opcode() == HloOpcode::kAsyncStart
                        ? "an async-start of no collective"
                        : std::string(hlo::OpcodeName(opcode)) + " waits for its start");
  }
  runtime::CollectivePlan base;
  base.op = op;
  base.name = inst->name();
  base.participants = participants;
  base.partitions = std::max(1, partitions);
  if (op == Op::kReplicaId || op == Op::kPartitionId) {
    if (node.outputs.size() != 1) return refuse("a result that is not one array");
    runtime::CollectiveThunk::Part part;
    part.plan = base;
    part.plan.type = node.outputs[0].shape.element_type();
    part.plan.id = (*next_id)++;
    part.out = SliceOf(node.outputs[0]);
    parts.push_back(std::move(part));
    return out;
  }
  // The result leaves. A start's tuple forwards its operands first (copied
  // there unless in place), then holds the results; a permute-start's is
  // (operand, result, contexts...), an async-start's ((operands), result,
  // contexts...).
  const size_t k = node.inputs.size();
  std::vector<const igraph::DramTensor*> results;
  auto forward = [&](size_t j, const igraph::DramTensor& to) {
    if (!SameSlice(to, node.inputs[j]))
      out.forwards.emplace_back(SliceOf(node.inputs[j]), SliceOf(to));
  };
  if (wrapped != nullptr) {
    const auto r = static_cast<size_t>(ArrayLeaves(inst->shape()));
    if (node.outputs.size() < k + r) return refuse("results that do not match its operands");
    for (size_t j = 0; j < k; ++j) forward(j, node.outputs[j]);
    for (size_t j = 0; j < r; ++j) results.push_back(&node.outputs[k + j]);
  } else if (opcode == HloOpcode::kCollectivePermuteStart) {
    if (k != 1 || node.outputs.size() < 2) return refuse("a permute-start of several operands");
    forward(0, node.outputs[0]);
    results.push_back(&node.outputs[1]);
  } else if (node.outputs.size() == k) {
    for (const igraph::DramTensor& t : node.outputs) results.push_back(&t);
  } else if (node.outputs.size() == 2 * k) {
    for (size_t j = 0; j < k; ++j) {
      forward(j, node.outputs[j]);
      results.push_back(&node.outputs[k + j]);
    }
  } else {
    return refuse("results that do not match its operands");
  }
  if (results.size() != k) return refuse("results that do not match its operands");
  if (opcode == HloOpcode::kAllToAll && DimensionOf(*inst) < 0) {
    return refuse("a tuple all-to-all");
  }
  if (op == Op::kAllReduce || op == Op::kReduceScatter) {
    const auto f = inst->attributes().GetOr<hlo::HloComputation*>(AttrKey::kToApply);
    const std::optional<runtime::FoldOp> fold = f && *f != nullptr ? FoldOpOf(**f) : std::nullopt;
    if (!fold)
      return refuse("a reducer that is not one add, multiply, maximum, minimum, and or or");
    base.fold = *fold;
  }
  if (op == Op::kPermute) {
    base.send_to.assign(static_cast<size_t>(participants), -1);
    base.receive_from.assign(static_cast<size_t>(participants), -1);
    const auto pairs = inst->attributes()
                           .GetOr<std::vector<std::vector<int64_t>>>(AttrKey::kSourceTargetPairs)
                           .value_or(std::vector<std::vector<int64_t>>{});
    for (const auto& pair : pairs) {
      if (pair.size() != 2 || pair[0] < 0 || pair[1] < 0 || pair[0] >= participants ||
          pair[1] >= participants) {
        return refuse("a source-target pair outside the run's participants");
      }
      int& to = base.send_to[static_cast<size_t>(pair[0])];
      int& from = base.receive_from[static_cast<size_t>(pair[1])];
      if (to >= 0 || from >= 0) return refuse("source-target pairs that repeat a participant");
      to = static_cast<int>(pair[1]);
      from = static_cast<int>(pair[0]);
    }
    base.groups.assign(static_cast<size_t>(participants), {});
    for (int p = 0; p < participants; ++p) {
      for (int q = 0; q < participants; ++q) base.groups[static_cast<size_t>(p)].push_back(q);
    }
  } else {
    try {
      base.groups = hlo::CollectiveGroups(*inst, participants, partitions);
    } catch (const ShapeError& e) {
      return refuse(e.what());
    }
    for (const auto& g : base.groups) {
      if (g.empty()) return refuse("a participant in no replica group");
    }
  }
  const int64_t dimension =
      op == Op::kAllReduce || op == Op::kPermute || op == Op::kBroadcast ? -1 : DimensionOf(*inst);
  for (size_t j = 0; j < k; ++j) {
    const igraph::DramTensor& in = node.inputs[j];
    const igraph::DramTensor& out = *results[j];
    runtime::CollectiveThunk::Part part;
    part.plan = base;
    part.plan.type = in.shape.element_type();
    part.plan.id = (*next_id)++;
    if (out.shape.element_type() != part.plan.type) return refuse("result of another type");
    if (MajorToMinor(in.shape) != MajorToMinor(out.shape)) {
      return refuse("operand and result in different layouts");
    }
    if (dimension >= in.shape.rank()) return refuse("a dimension past the operand's rank");
    if ((op == Op::kAllReduce || op == Op::kReduceScatter) &&
        !runtime::FoldSupported(part.plan.type, part.plan.fold)) {
      return refuse(std::string(runtime::FoldOpName(part.plan.fold)) + " of " +
                    std::string(PrimitiveTypeName(part.plan.type)));
    }
    Around(in.shape, dimension, part.plan);
    for (const auto& g : part.plan.groups) {
      const auto size = static_cast<int64_t>(g.size());
      const bool splits = op != Op::kReduceScatter && op != Op::kAllToAll;
      if (!splits && part.plan.dim % size != 0) {
        return refuse("dimension " + std::to_string(dimension) + " of " + in.shape.Describe() +
                      " does not split into " + std::to_string(size) + " equal pieces");
      }
      const int64_t bytes = in.bytes;
      const int64_t want = op == Op::kAllGather       ? bytes * size
                           : op == Op::kReduceScatter ? bytes / size
                                                      : bytes;
      if (out.bytes != want) return refuse("a result of another size than its group gives");
    }
    part.in = SliceOf(in);
    part.out = SliceOf(out);
    parts.push_back(std::move(part));
  }
  return out;
}

}  // namespace uir::codegen
