#include "passes/fusion/priority_fusion.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "passes/fusion/fusion_analysis.h"
#include "passes/fusion/fusion_utils.h"

namespace uir::passes {

using fusion::FusionSummary;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

std::vector<HloComputation*> FusionTargets(const hlo::HloModule& module) {
  std::vector<HloComputation*> out;
  if (module.entry() == nullptr) return out;
  std::unordered_set<const HloComputation*> seen = {module.entry()};
  std::vector<HloComputation*> work = {module.entry()};
  while (!work.empty()) {
    HloComputation* c = work.back();
    work.pop_back();
    out.push_back(c);
    for (const HloInstruction* i : c->instructions()) {
      const HloOpcode op = i->opcode();
      if (op != HloOpcode::kWhile && op != HloOpcode::kConditional && op != HloOpcode::kCall)
        continue;
      for (HloComputation* callee : i->called_computations()) {
        if (seen.insert(callee).second) work.push_back(callee);
      }
    }
  }
  // Deterministic: call-graph post order.
  std::vector<HloComputation*> ordered;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (seen.count(c)) ordered.push_back(c);
  }
  return ordered;
}

namespace {

std::string KindName(const HloInstruction& fusion) {
  return std::string(
      hlo::FusionKindName(fusion.attributes().GetEnum<hlo::FusionKind>(hlo::AttrKey::kKind)));
}

std::string OpLabel(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kFusion) return "fusion(" + KindName(i) + ")";
  return std::string(hlo::OpcodeName(i.opcode()));
}

// The state of one computation's fusion: cached per-fusion facts that would
// otherwise cost a walk of the fused computation each time.
class Fuser {
 public:
  Fuser(HloComputation& c, const MachineModel& machine, std::vector<FusionDecision>& log)
      : c_(c), machine_(machine), log_(log) {}

  bool Run() {
    int64_t order = 0;
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) order_[i->unique_id()] = order++;
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) Consider(i);
    bool changed = false;
    while (!queue_.empty()) {
      Entry e = queue_.top();
      queue_.pop();
      if (e.instruction->is_removed() || version_[e.instruction->unique_id()] != e.version)
        continue;
      Fuse(e.instruction, e.evaluation);
      changed = true;
    }
    for (HloInstruction* i : c_.MakeInstructionPostOrder()) {
      auto it = rejected_.find(i->unique_id());
      if (it != rejected_.end()) log_.push_back(it->second);
      if (i->opcode() == HloOpcode::kFusion && bodies_.count(i->unique_id()))
        fusion::TidyFusedComputation(*i);
    }
    return changed;
  }

 private:
  struct Evaluation {
    std::string rule;  // empty: fusible
    double benefit = 0, bytes_saved = 0, flops_duplicated = 0;
    double seconds_unfused = 0, seconds_fused = 0;
    std::string kind;
  };
  struct Entry {
    double benefit;
    int64_t order;
    HloInstruction* instruction;
    int64_t version;
    Evaluation evaluation;
    bool operator<(const Entry& other) const {  // max-heap: best benefit, then earliest
      if (benefit != other.benefit) return benefit < other.benefit;
      return order > other.order;
    }
  };

  bool Fusible(const HloInstruction& i) {
    if (i.opcode() != HloOpcode::kFusion) return fusion::IsFusible(i);
    auto [it, inserted] = fusible_fusions_.try_emplace(i.unique_id(), false);
    if (inserted) it->second = fusion::IsFusible(i);
    return it->second;
  }

  FusionSummary Summarize(const HloInstruction& i) {
    if (i.opcode() != HloOpcode::kFusion) return FusionSummary::Of(i);
    auto [it, inserted] = bodies_.try_emplace(i.unique_id());
    if (inserted) it->second = FusionSummary::Of(i);
    FusionSummary s = it->second;  // body facts; inputs from the operands as they are now
    s.ClearInputs();
    s.AddFusionInputs(i);
    return s;
  }

  Evaluation Evaluate(HloInstruction* p) {
    Evaluation ev;
    const FusionSummary ps = Summarize(*p);
    const int64_t users = p->user_count();
    if (p == c_.root()) {
      ev.rule = "it is the computation's result";
      return ev;
    }
    if ((ps.reductions > 0 || ps.library_ops > 0) && users > 1) {
      ev.rule = "a reduction or dot is never computed twice, and it has " + std::to_string(users) +
                " users";
      return ev;
    }
    ev.seconds_unfused = ps.Seconds(machine_);
    ev.bytes_saved = static_cast<double>(ps.BytesAccessed());
    std::string kind = "kLoop";
    for (HloInstruction* u : p->users()) {
      if (!Fusible(*u)) {
        ev.rule = "its user %" + u->name() + " (" + OpLabel(*u) + ") does not fuse";
        return ev;
      }
      const FusionSummary us = Summarize(*u);
      const FusionSummary ms = FusionSummary::Merge(*p, ps, us);
      if (ms.inputs.size() > fusion::kMaxFusionInputs) {
        ev.rule = "fusing into %" + u->name() + " would read more than " +
                  std::to_string(fusion::kMaxFusionInputs) + " inputs";
        return ev;
      }
      const bool trivial = ms.library_ops == 0 &&
                           (ms.reductions == 0 || (ms.reductions == 1 && us.root_is_reduction));
      if (!trivial) {
        std::string why = fusion::FusionView(p, u).Check(machine_);
        if (!why.empty()) {
          ev.rule = "into %" + u->name() + ": " + why;
          return ev;
        }
      }
      ev.seconds_unfused += us.Seconds(machine_);
      ev.seconds_fused += ms.Seconds(machine_);
      ev.bytes_saved += static_cast<double>(us.BytesAccessed() - ms.BytesAccessed());
      kind = hlo::FusionKindName(ms.Kind());
    }
    ev.flops_duplicated = ps.flops * static_cast<double>(users - 1);
    ev.benefit = ev.seconds_unfused - ev.seconds_fused;
    // With one user, fusing duplicates nothing and only removes the
    // intermediate's write and read. The roofline's cache threshold can
    // still make two kernels look cheaper than one (each small enough to
    // count as cache-resident, together not, though they read the same
    // memory): such a fusion is worth the traffic it saves and a launch.
    if (ev.benefit < 0 && users == 1 && ev.bytes_saved > 0) {
      const double cores = static_cast<double>(std::max<int64_t>(1, machine_.cores));
      ev.benefit =
          ev.bytes_saved / (machine_.dram_bytes_per_s * cores) + machine_.kernel_overhead_s;
    }
    ev.kind = kind;
    if (ev.benefit < 0) ev.rule = "it costs more than it saves (duplicated work)";
    return ev;
  }

  void Consider(HloInstruction* p) {
    if (p->is_removed() || p->users().empty() || !Fusible(*p)) return;
    const int64_t id = p->unique_id();
    const int64_t version = ++version_[id];
    Evaluation ev = Evaluate(p);
    if (!ev.rule.empty()) {
      rejected_[id] = Record(*p, ev, false, "");
      return;
    }
    rejected_.erase(id);
    queue_.push(Entry{ev.benefit, order_[id], p, version, std::move(ev)});
  }

  FusionDecision Record(const HloInstruction& p, const Evaluation& ev, bool fused,
                        const std::string& result) {
    FusionDecision d;
    d.computation = c_.name();
    d.producer = p.name();
    d.producer_op = OpLabel(p);
    for (const HloInstruction* u : p.users()) d.consumers.push_back(u->name());
    d.fused = fused;
    d.result = result;
    d.kind = ev.kind;
    d.rule = !fused ? ev.rule
             : ev.seconds_fused > ev.seconds_unfused
                 ? "fused: one user, so it saves its intermediate's traffic (only the cache "
                   "threshold counts against it)"
                 : "fused: saves more time than the duplicated work costs";
    d.bytes_saved = ev.bytes_saved;
    d.flops_duplicated = ev.flops_duplicated;
    d.seconds_unfused = ev.seconds_unfused;
    d.seconds_fused = ev.seconds_fused;
    return d;
  }

  void Fuse(HloInstruction* p, const Evaluation& ev) {
    FusionDecision d = Record(*p, ev, true, "");
    const FusionSummary ps = Summarize(*p);
    const std::vector<HloInstruction*> users = p->users();
    std::vector<HloInstruction*> fusions;
    if (p->opcode() == HloOpcode::kFusion && users.size() == 1 &&
        (users[0]->opcode() != HloOpcode::kFusion ||
         fusion::FusedComputation(*users[0])->instruction_count() <
             fusion::FusedComputation(*p)->instruction_count())) {
      // The producer's fusion is the bigger one: the consumer moves into it
      // (so growing a long chain costs linear time, not quadratic).
      HloInstruction* u = users[0];
      const FusionSummary us = Summarize(*u);
      order_[p->unique_id()] = order_[u->unique_id()];
      rejected_.erase(u->unique_id());
      fusion::FuseConsumerIntoProducer(p, u);
      bodies_[p->unique_id()] = FusionSummary::Merge(*p, ps, us);
      fusions.push_back(p);
    } else {
      for (HloInstruction* u : users) {
        HloInstruction* f = u;
        if (u->opcode() != HloOpcode::kFusion) {
          f = fusion::WrapInFusion(u, hlo::FusionKind::kLoop);
          order_[f->unique_id()] = order_[u->unique_id()];
          fusion::UpdateFusionKind(f);  // one instruction: cheap
        }
        FusionSummary body = Summarize(*f);
        fusion::FuseProducerInto(f, p);
        bodies_[f->unique_id()] = FusionSummary::Merge(*p, ps, body);
        fusible_fusions_[f->unique_id()] = true;
        fusions.push_back(f);
      }
      c_.RemoveInstruction(p);
      rejected_.erase(p->unique_id());
    }
    d.result = fusions.front()->name();
    d.kind = KindName(*fusions.front());
    log_.push_back(std::move(d));
    for (HloInstruction* f : fusions) {
      Consider(f);
      for (HloInstruction* o : f->operands()) Consider(o);
    }
  }

  HloComputation& c_;
  const MachineModel& machine_;
  std::vector<FusionDecision>& log_;
  std::priority_queue<Entry> queue_;
  std::unordered_map<int64_t, int64_t> version_;
  std::unordered_map<int64_t, int64_t> order_;
  std::unordered_map<int64_t, FusionSummary> bodies_;
  std::unordered_map<int64_t, bool> fusible_fusions_;
  std::unordered_map<int64_t, FusionDecision> rejected_;
};

}  // namespace

bool PriorityFusion::RunOnComputation(HloComputation& computation) {
  return Fuser(computation, machine_, decisions_).Run();
}

bool PriorityFusion::Run(hlo::HloModule& module) {
  decisions_.clear();
  bool changed = false;
  for (HloComputation* c : FusionTargets(module)) changed |= RunOnComputation(*c);
  if (changed) module.RemoveUnreachableComputations();
  return changed;
}

}  // namespace uir::passes
