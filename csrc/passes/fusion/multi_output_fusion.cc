#include "passes/fusion/multi_output_fusion.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "passes/dataflow_order.h"
#include "passes/fusion/fusion_analysis.h"
#include "passes/fusion/fusion_utils.h"
#include "passes/fusion/priority_fusion.h"

namespace uir::passes {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// The iteration space of a fusion's outputs: the dimensions it loops over
// (a reduction: its input's) and, for reductions, the dimensions reduced.
struct Space {
  std::vector<int64_t> dims;
  std::optional<std::vector<int64_t>> reduced;
};

std::vector<const HloInstruction*> Outputs(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kFusion) return {&i};
  const HloInstruction* root = fusion::FusedComputation(i)->root();
  if (root->opcode() != HloOpcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

// The common space of all outputs, or nullopt if they differ.
std::optional<Space> SpaceOf(const HloInstruction& i) {
  std::optional<Space> out;
  for (const HloInstruction* o : Outputs(i)) {
    Space s;
    if (o->opcode() == HloOpcode::kReduce) {
      if (o->operand_count() != 2) return std::nullopt;  // variadic: left alone
      s.dims = o->operand(0)->shape().dimensions();
      auto dims = o->attributes().Get<std::vector<int64_t>>(hlo::AttrKey::kDimensions);
      std::sort(dims.begin(), dims.end());
      s.reduced = dims;
    } else {
      if (!o->shape().IsArray()) return std::nullopt;
      s.dims = o->shape().dimensions();
    }
    if (!out) {
      out = s;
    } else if (out->dims != s.dims) {
      return std::nullopt;
    } else if (s.reduced) {
      if (out->reduced && *out->reduced != *s.reduced) return std::nullopt;
      out->reduced = s.reduced;
    }
  }
  return out;
}

// A sibling candidate: a fusible op or fusion without a dot and without
// reductions other than its outputs; a multi-output fusion only if every
// reader takes one element.
bool Candidate(const HloInstruction& i) {
  const HloOpcode op = i.opcode();
  if (op == HloOpcode::kFusion) {
    if (i.HasSideEffect() || !i.control_predecessors().empty() || !i.control_successors().empty())
      return false;
    const auto outputs = Outputs(i);
    if (outputs.size() > 1) {
      for (const HloInstruction* u : i.users())
        if (u->opcode() != HloOpcode::kGetTupleElement) return false;
    }
    int64_t output_reductions = 0;
    for (const HloInstruction* o : outputs) output_reductions += o->opcode() == HloOpcode::kReduce;
    const fusion::FusionSummary s = fusion::FusionSummary::Of(i);
    return s.library_ops == 0 && s.reductions == output_reductions;
  }
  if (!fusion::IsFusible(i)) return false;
  return op != HloOpcode::kDot && op != HloOpcode::kConvolution && op != HloOpcode::kConstant &&
         op != HloOpcode::kFusion;
}

bool Compatible(const HloInstruction& a, const HloInstruction& b) {
  const std::optional<Space> sa = SpaceOf(a), sb = SpaceOf(b);
  if (!sa || !sb || sa->dims != sb->dims) return false;
  return !sa->reduced || !sb->reduced || *sa->reduced == *sb->reduced;
}

size_t MergedInputs(const HloInstruction& a, const HloInstruction& b) {
  std::unordered_set<const HloInstruction*> in(a.operands().begin(), a.operands().end());
  in.insert(b.operands().begin(), b.operands().end());
  return in.size();
}

// A producer that can join a consumer's fusion as an extra output: one array
// output computed elementwise (no reduction, dot or convolution inside, so
// its iteration space is its shape), no control edges, and readers besides
// the consumer (with only one, priority fusion already decided).
bool ProducerCandidate(const HloInstruction& p) {
  // (Candidate already refuses control edges.)
  if (!p.shape().IsArray() || p.user_count() < 2 || !Candidate(p)) return false;
  const fusion::FusionSummary s = fusion::FusionSummary::Of(p);
  return s.reductions == 0 && s.library_ops == 0;
}

// True if `consumer` reads `p` only at the index it computes: through
// elementwise ops of the same dimensions into its outputs or a reduction's
// input. Then a kernel writes each element of `p` where it computes it.
bool ReadsElementwise(const HloInstruction& consumer, const HloInstruction& p) {
  const auto at_own_index = [&](const HloInstruction& user, const HloInstruction& value) {
    if (user.opcode() == HloOpcode::kReduce) {
      for (int64_t k = user.operand_count() / 2; k < user.operand_count(); ++k)
        if (user.operand(k) == &value) return false;  // an init value
      return true;
    }
    return hlo::IsElementwise(user.opcode()) && user.shape().IsArray() &&
           user.shape().dimensions() == p.shape().dimensions();
  };
  if (consumer.opcode() != HloOpcode::kFusion) return at_own_index(consumer, p);
  const HloComputation* fused = fusion::FusedComputation(consumer);
  const HloInstruction* root = fused->root();
  std::vector<const HloInstruction*> work;
  for (int64_t k = 0; k < consumer.operand_count(); ++k)
    if (consumer.operand(k) == &p) work.push_back(fused->parameter(k));
  std::unordered_set<const HloInstruction*> seen(work.begin(), work.end());
  while (!work.empty()) {
    const HloInstruction* v = work.back();
    work.pop_back();
    for (const HloInstruction* u : v->users()) {
      if (u == root && u->opcode() == HloOpcode::kTuple) continue;  // an output
      if (!at_own_index(*u, *v)) return false;
      if (u->opcode() != HloOpcode::kReduce && seen.insert(u).second) work.push_back(u);
    }
  }
  return true;
}

// Producer-consumer fusion: for each consumer in post order, an operand that
// is a ProducerCandidate with the consumer's iteration space joins the
// consumer's fusion and is written from there, so the consumer no longer
// reads it from memory. Refused where another reader of the producer is
// reached by the consumer (the fusion would read its own output).
bool FuseProducersAsOutputs(HloComputation& c, std::vector<HloInstruction*>& grown) {
  bool changed = false;
  DataflowOrder dataflow(c);
  for (HloInstruction* consumer : c.MakeInstructionPostOrder()) {
    if (consumer->is_removed() || !Candidate(*consumer)) continue;
    const std::optional<Space> space = SpaceOf(*consumer);
    if (!space) continue;
    for (bool again = true; again;) {
      again = false;
      for (HloInstruction* p : consumer->operands()) {
        if (!ProducerCandidate(*p) || p->shape().dimensions() != space->dims ||
            !ReadsElementwise(*consumer, *p))
          continue;
        if (MergedInputs(*consumer, *p) > fusion::kMaxFusionInputs) continue;
        bool cycle = false;
        for (const HloInstruction* u : p->users())
          cycle |= u != consumer && dataflow.After(consumer, u);
        if (cycle) continue;
        if (consumer->opcode() != HloOpcode::kFusion) {
          consumer = fusion::WrapInFusion(consumer, hlo::FusionKind::kLoop);
          fusion::UpdateFusionKind(consumer);
        }
        grown.erase(std::remove(grown.begin(), grown.end(), p), grown.end());
        fusion::FuseProducerAsOutput(consumer, p);
        if (std::find(grown.begin(), grown.end(), consumer) == grown.end())
          grown.push_back(consumer);
        dataflow.Renumber();
        again = changed = true;
        break;  // the operand list changed
      }
    }
  }
  return changed;
}

bool RunOnComputation(HloComputation& c) {
  bool changed = false;
  std::vector<HloInstruction*> grown;
  // Each merge changes the graph: positions are recomputed after it and the
  // operand retried, until no pair of its users merges.
  std::vector<HloInstruction*> order = c.MakeInstructionPostOrder();
  DataflowOrder dataflow(c);
  for (size_t k = 0; k < order.size(); ++k) {
    HloInstruction* shared = order[k];
    if (shared->is_removed()) continue;
    std::vector<HloInstruction*> siblings;
    for (HloInstruction* u : shared->users())
      if (Candidate(*u)) siblings.push_back(u);
    std::sort(siblings.begin(), siblings.end(),
              [&](auto* x, auto* y) { return dataflow.Position(x) < dataflow.Position(y); });
    bool merged = false;
    for (size_t i = 0; i < siblings.size() && !merged; ++i) {
      for (size_t j = i + 1; j < siblings.size() && !merged; ++j) {
        HloInstruction* a = siblings[i];
        HloInstruction* b = siblings[j];
        if (b->opcode() == HloOpcode::kFusion && Outputs(*b).size() > 1) std::swap(a, b);
        if (b->opcode() == HloOpcode::kFusion && Outputs(*b).size() > 1) continue;
        if (!Compatible(*a, *b) || MergedInputs(*a, *b) > fusion::kMaxFusionInputs) continue;
        if (dataflow.After(a, b) || dataflow.After(b, a)) continue;
        if (a->opcode() != HloOpcode::kFusion) {
          a = fusion::WrapInFusion(a, hlo::FusionKind::kLoop);
          fusion::UpdateFusionKind(a);
        }
        fusion::MergeSibling(a, b);
        if (std::find(grown.begin(), grown.end(), a) == grown.end()) grown.push_back(a);
        merged = changed = true;
      }
    }
    if (merged) {  // the same operand again, with fresh positions
      dataflow.Renumber();
      --k;
    }
  }
  changed |= FuseProducersAsOutputs(c, grown);
  for (HloInstruction* f : grown) fusion::TidyFusedComputation(*f);
  return changed;
}

}  // namespace

bool MultiOutputFusion::Run(hlo::HloModule& module) {
  bool changed = false;
  for (HloComputation* c : FusionTargets(module)) changed |= RunOnComputation(*c);
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
