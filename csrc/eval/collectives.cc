// Collectives of a replicated evaluation. Groups come from replica_groups
// (explicit or iota form; empty means everyone), read as XLA's modes do:
// global device ids (use_global_device_ids, or a single partition),
// partition ids within the caller's replica (channel_id without global ids),
// or replica ids for the caller's partition (no channel_id).
#include "eval/collectives.h"

#include <algorithm>
#include <numeric>

#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/collective_groups.h"
#include "hlo/module.h"
#include "support/error.h"

namespace uir::eval {
namespace {

using hlo::AttrKey;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Literal;

std::string Where(const HloInstruction& inst) { return "%" + inst.name(); }

// The participants `self` exchanges with at `inst`, in group order.
std::vector<int> GroupOf(const HloInstruction& inst, const Participant& self, int n) {
  std::vector<int> group =
      hlo::CollectiveGroups(inst, n, self.partitions).at(static_cast<size_t>(self.id));
  if (group.empty()) {
    throw ShapeError("participant " + std::to_string(self.id) + " is in no replica group of " +
                     Where(inst));
  }
  return group;
}

int IndexIn(const std::vector<int>& group, int id) {
  return static_cast<int>(std::find(group.begin(), group.end(), id) - group.begin());
}

// f(a, b) elementwise: lifted over whole arrays when f allows it.
Literal Combine(Context& ctx, const HloComputation& f, const Literal& a, const Literal& b) {
  Literal out = MakeLiteral(a.shape().element_type(), a.shape().dimensions());
  if (ctx.Liftable(f) && a.element_count() > 0) {
    const Literal fa = Reshaped(a, {a.element_count()}), fb = Reshaped(b, {b.element_count()});
    const Literal r = ctx.CallLifted(f, {&fa, &fb}, nullptr);
    out.mutable_bytes().assign(r.bytes().begin(), r.bytes().end());
    return out;
  }
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const Literal x = ElementAt(a, i), y = ElementAt(b, i);
    SetElement(out, i, ctx.Call(f, {&x, &y}));
  }
  return out;
}

// Piece `k` of `count` equal pieces of `x` along `dim`.
Literal Piece(const Literal& x, int64_t dim, int64_t count, int64_t k) {
  std::vector<int64_t> dims = x.shape().dimensions();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || dims[dim] % count != 0) {
    throw ShapeError("dimension " + std::to_string(dim) + " of " + x.shape().Describe() +
                     " does not split into " + std::to_string(count) + " equal pieces");
  }
  const int64_t size = dims[dim] / count;
  dims[dim] = size;
  Literal out = MakeLiteral(x.shape().element_type(), dims);
  const auto in_strides = Strides(x.shape().dimensions());
  ForEachIndex(dims, [&](const std::vector<int64_t>& idx, int64_t linear) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (idx[d] + (static_cast<int64_t>(d) == dim ? k * size : 0)) * in_strides[d];
    CopyElement(x, src, out, linear);
  });
  return out;
}

// `parts` concatenated along `dim`.
Literal Concat(const std::vector<const Literal*>& parts, int64_t dim) {
  std::vector<int64_t> dims = parts[0]->shape().dimensions();
  dims[dim] = 0;
  for (const Literal* p : parts) dims[dim] += p->shape().dimensions()[dim];
  Literal out = MakeLiteral(parts[0]->shape().element_type(), dims);
  const auto out_strides = Strides(dims);
  int64_t offset = 0;
  for (const Literal* p : parts) {
    ForEachIndex(p->shape().dimensions(), [&](const std::vector<int64_t>& idx, int64_t linear) {
      int64_t dst = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        dst += (idx[d] + (static_cast<int64_t>(d) == dim ? offset : 0)) * out_strides[d];
      CopyElement(*p, linear, out, dst);
    });
    offset += p->shape().dimensions()[dim];
  }
  return out;
}

Literal Tuple(std::vector<Literal> parts, bool as_tuple) {
  if (!as_tuple) return std::move(parts[0]);
  return TupleOf(std::move(parts));
}

int64_t Dimension(const HloInstruction& inst) {
  if (auto d = inst.attributes().GetOr<std::vector<int64_t>>(AttrKey::kDimensions);
      d && !d->empty())
    return (*d)[0];
  return inst.attributes().GetOr<int64_t>(AttrKey::kSplitDimension).value_or(-1);
}

}  // namespace

Rendezvous::Rendezvous(int participants)
    : n_(participants),
      runs_(static_cast<size_t>(participants)),
      finished_(static_cast<size_t>(participants), 0) {}

std::vector<Rendezvous::Contribution> Rendezvous::Exchange(const HloInstruction& inst, int me,
                                                           std::vector<Literal> mine) {
  std::unique_lock<std::mutex> lock(mu_);
  const int64_t run = runs_[me][&inst]++;
  Slot& slot = slots_[{&inst, run}];
  if (slot.values.empty()) slot.values.resize(static_cast<size_t>(n_));
  slot.values[me] = std::make_shared<const std::vector<Literal>>(std::move(mine));
  ++slot.arrived;
  cv_.notify_all();
  cv_.wait(lock, [&] {
    if (slot.arrived == n_) return true;
    for (int p = 0; p < n_; ++p) {
      if (finished_[p] != 0 && slot.values[p] == nullptr) return true;
    }
    return false;
  });
  if (slot.arrived != n_) {
    int gone = 0;
    while (slot.values[gone] != nullptr || finished_[gone] == 0) ++gone;
    throw ShapeError("participant " + std::to_string(gone) +
                     (finished_[gone] == 2 ? " failed" : " finished") + " before reaching %" +
                     inst.name() + " (run " + std::to_string(run) + "), which participant " +
                     std::to_string(me) + " waits at");
  }
  std::vector<Contribution> out = slot.values;
  if (++slot.collected == n_) slots_.erase({&inst, run});
  return out;
}

void Rendezvous::Finish(int me, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  finished_[me] = failed ? 2 : 1;
  cv_.notify_all();
}

namespace {

Literal EvalCollectiveUnchecked(const HloInstruction& inst, const std::vector<const Literal*>& ops,
                                const Participant& self, Context& ctx) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kReplicaId || op == HloOpcode::kPartitionId) {
    Literal out = MakeLiteral(inst.shape().element_type(), {});
    out.SetInt64(
        0, op == HloOpcode::kReplicaId ? self.id / self.partitions : self.id % self.partitions);
    return out;
  }
  const int n = self.rendezvous != nullptr ? self.rendezvous->participants() : 1;
  std::vector<Rendezvous::Contribution> all;
  {
    std::vector<Literal> mine;
    for (const Literal* o : ops) mine.push_back(*o);
    if (self.rendezvous != nullptr) {
      all = self.rendezvous->Exchange(inst, self.id, std::move(mine));
    } else {
      all.push_back(std::make_shared<const std::vector<Literal>>(std::move(mine)));
    }
  }
  auto from = [&](int participant, size_t operand) -> const Literal& {
    return (*all[participant])[operand];
  };
  const size_t count = ops.size();
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter: {
      const auto group = GroupOf(inst, self, n);
      const HloComputation& f = *inst.attributes().Get<HloComputation*>(AttrKey::kToApply);
      std::vector<Literal> results;
      for (size_t j = 0; j < count; ++j) {
        Literal acc = from(group[0], j);
        for (size_t m = 1; m < group.size(); ++m) acc = Combine(ctx, f, acc, from(group[m], j));
        if (op == HloOpcode::kReduceScatter) {
          acc = Piece(acc, Dimension(inst), static_cast<int64_t>(group.size()),
                      IndexIn(group, self.id));
        }
        results.push_back(std::move(acc));
      }
      // all-reduce-start in its older form is ((operand), result).
      if (op == HloOpcode::kAllReduceStart && inst.shape().IsTuple() && count == 1 &&
          inst.shape().tuple_shapes_size() == 2) {
        return TupleOf({*ops[0], std::move(results[0])});
      }
      return Tuple(std::move(results), count > 1);
    }
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart: {
      const auto group = GroupOf(inst, self, n);
      std::vector<Literal> results;
      for (size_t j = 0; j < count; ++j) {
        std::vector<const Literal*> parts;
        for (int m : group) parts.push_back(&from(m, j));
        results.push_back(Concat(parts, Dimension(inst)));
      }
      if (op == HloOpcode::kAllGatherStart) {
        std::vector<Literal> operands;
        for (const Literal* o : ops) operands.push_back(*o);
        return TupleOf(
            {Tuple(std::move(operands), count > 1), Tuple(std::move(results), count > 1)});
      }
      return Tuple(std::move(results), count > 1);
    }
    case HloOpcode::kAllToAll: {
      const auto group = GroupOf(inst, self, n);
      const int me = IndexIn(group, self.id);
      const int64_t g = static_cast<int64_t>(group.size());
      const int64_t dim = Dimension(inst);
      if (dim >= 0) {  // one array, split along `dim`, pieces exchanged
        std::vector<Literal> pieces;
        for (int m : group) pieces.push_back(Piece(from(m, 0), dim, g, me));
        std::vector<const Literal*> parts;
        for (const Literal& p : pieces) parts.push_back(&p);
        return Concat(parts, dim);
      }
      // Tuple form: operand i goes to group member i.
      std::vector<Literal> results;
      for (int m : group) results.push_back(from(m, static_cast<size_t>(me)));
      return Tuple(std::move(results), count > 1);
    }
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: {
      const auto pairs = inst.attributes()
                             .GetOr<std::vector<std::vector<int64_t>>>(AttrKey::kSourceTargetPairs)
                             .value_or(std::vector<std::vector<int64_t>>{});
      Literal result = MakeLiteral(ops[0]->shape().element_type(), ops[0]->shape().dimensions());
      for (const auto& pair : pairs) {
        if (pair.size() == 2 && pair[1] == self.id && pair[0] >= 0 && pair[0] < n) {
          result = from(static_cast<int>(pair[0]), 0);
        }
      }
      if (op == HloOpcode::kCollectivePermuteStart) {
        std::vector<Literal> parts = {*ops[0], std::move(result)};
        for (int64_t i = 2; i < inst.shape().tuple_shapes_size(); ++i)
          parts.emplace_back(inst.shape().tuple_shapes(i));
        return TupleOf(std::move(parts));
      }
      return result;
    }
    case HloOpcode::kCollectiveBroadcast: {
      const auto group = GroupOf(inst, self, n);
      std::vector<Literal> results;
      for (size_t j = 0; j < count; ++j) results.push_back(from(group[0], j));
      return Tuple(std::move(results), count > 1);
    }
    default:
      break;
  }
  throw UnimplementedError("the evaluator does not support " + std::string(hlo::OpcodeName(op)) +
                           " yet (" + Where(inst) + ")");
}

}  // namespace

// The group sizes a collective meets depend on how many participants run
// it, so a shape that does not fit them is found here, not by the verifier.
hlo::Literal EvalCollective(const hlo::HloInstruction& inst,
                            const std::vector<const hlo::Literal*>& ops, const Participant& self,
                            Context& ctx) {
  hlo::Literal out = EvalCollectiveUnchecked(inst, ops, self, ctx);
  if (!SameArrays(out.shape(), inst.shape())) {
    throw ShapeError(Where(inst) + " produces " + out.shape().Describe() + " for its group, not " +
                     inst.shape().Describe());
  }
  return out;
}

int RequiredParticipants(const hlo::HloModule& module) { return hlo::RequiredParticipants(module); }

}  // namespace uir::eval
