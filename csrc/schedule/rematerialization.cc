#include "schedule/rematerialization.h"

#include <algorithm>
#include <sstream>

#include "analysis/liveness.h"
#include "hlo/computation.h"
#include "passes/fusion/fusion_utils.h"
#include "support/error.h"

namespace uir::schedule {

using analysis::HloBuffer;
using analysis::HloValue;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

std::string RematReport::ToString() const {
  std::ostringstream os;
  os << "rematerialization: peak " << peak_before << " -> " << peak_after << " bytes (limit "
     << memory_limit << "), " << remats.size() << " recomputed\n";
  for (const Remat& r : remats) {
    if (r.output >= 0) {
      os << "  output " << r.output << " of %" << r.instruction << " split out as %" << r.clone;
    } else {
      os << "  %" << r.instruction << " recomputed as %" << r.clone;
    }
    os << ", " << r.bytes_saved << " bytes saved at the peak\n";
  }
  return os.str();
}

namespace {

bool Cheap(const HloInstruction& i) {
  if (i.HasSideEffect() || !i.control_predecessors().empty() || !i.shape().IsArray()) return false;
  if (hlo::IsElementwise(i.opcode())) return true;
  switch (i.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kIota:
    case HloOpcode::kReshape:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kReduce:
    case HloOpcode::kReverse:
      return true;
    case HloOpcode::kFusion: {
      const HloComputation* fused = i.attributes().Get<HloComputation*>(hlo::AttrKey::kCalls);
      for (const HloInstruction* n : fused->instructions()) {
        if (n->opcode() == HloOpcode::kParameter || n->opcode() == HloOpcode::kConstant) continue;
        if (!Cheap(*n)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// The instructions of `fusion`'s computation that its output `k` needs,
// operands first.
std::vector<const HloInstruction*> NeededFor(const HloInstruction& fusion, int64_t k) {
  const HloComputation* fused = fusion.attributes().Get<HloComputation*>(hlo::AttrKey::kCalls);
  std::vector<const HloInstruction*> order;
  absl::flat_hash_map<const HloInstruction*, bool> seen;
  std::vector<std::pair<const HloInstruction*, size_t>> stack = {{fused->root()->operand(k), 0}};
  seen[stack.back().first] = true;
  while (!stack.empty()) {
    auto& [x, next] = stack.back();
    if (next < static_cast<size_t>(x->operand_count())) {
      const HloInstruction* o = x->operand(static_cast<int64_t>(next++));
      if (seen.emplace(o, true).second) stack.push_back({o, 0});
      continue;
    }
    order.push_back(x);
    stack.pop_back();
  }
  return order;
}

// Output `k` of a multi-output fusion whose other outputs are left out:
// cheap when every instruction it needs is.
bool CheapOutput(const HloInstruction& fusion, int64_t k) {
  for (const HloInstruction* n : NeededFor(fusion, k)) {
    if (n->opcode() == HloOpcode::kParameter || n->opcode() == HloOpcode::kConstant) continue;
    if (!Cheap(*n)) return false;
  }
  return true;
}

// A fusion computing output `k` of `fusion` alone, reading only the
// operands that output needs; added to `fusion`'s computation, unscheduled.
HloInstruction* SplitOutput(HloInstruction* fusion, int64_t k) {
  HloComputation* c = fusion->parent();
  hlo::HloModule* module = c->parent();
  const HloComputation* fused = fusion->attributes().Get<HloComputation*>(hlo::AttrKey::kCalls);
  auto body = std::make_unique<HloComputation>(module->UniqueComputationName(fused->name()));
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> clones;
  std::vector<HloInstruction*> operands;
  for (const HloInstruction* x : NeededFor(*fusion, k)) {
    if (x->opcode() == HloOpcode::kParameter) {
      const auto n = static_cast<int64_t>(operands.size());
      auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, x->shape(),
                                                    "param_" + std::to_string(n));
      param->set_parameter_number(n);
      operands.push_back(fusion->operand(x->parameter_number()));
      clones[x] = body->AddInstruction(std::move(param));
      continue;
    }
    std::vector<HloInstruction*> ops;
    for (const HloInstruction* o : x->operands()) ops.push_back(clones.at(o));
    clones[x] = body->AddInstruction(x->CloneWithNewOperands(x->shape(), ops));
  }
  const HloInstruction* out = fused->root()->operand(k);
  body->set_root(clones.at(out));
  HloComputation* added = module->AddComputation(std::move(body));
  auto split = std::make_unique<HloInstruction>(HloOpcode::kFusion, out->shape(),
                                                c->UniqueName(fusion->name() + ".split"));
  for (HloInstruction* o : operands) split->AppendOperand(o);
  split->mutable_attributes().SetEnum(hlo::AttrKey::kKind, hlo::FusionKind::kLoop);
  split->mutable_attributes().Set(hlo::AttrKey::kCalls, added);
  HloInstruction* result = c->AddInstruction(std::move(split));
  passes::fusion::UpdateFusionKind(result);
  return result;
}

// The get-tuple-element of output `k` of `fusion` that `use` reads it
// through, or nullptr.
HloInstruction* OutputRead(const analysis::HloUse& use, const HloInstruction* fusion, int64_t k) {
  HloInstruction* o = use.instruction->operand(use.operand_number);
  if (o->opcode() != HloOpcode::kGetTupleElement || o->operand(0) != fusion ||
      !use.operand_index.empty())
    return nullptr;
  return o->attributes().Get<int64_t>(hlo::AttrKey::kIndex) == k ? o : nullptr;
}

struct Candidate {
  HloInstruction* instruction = nullptr;
  int64_t saved = 0;
  std::vector<HloInstruction*> late_users;
  int64_t output = -1;                     // a split: the output
  std::vector<HloInstruction*> late_gtes;  // a split: what the late users read
};

}  // namespace

RematReport Rematerialize(hlo::HloModule& module, int64_t limit) {
  UIR_CHECK(module.has_schedule()) << "rematerialization needs a scheduled module";
  RematReport report;
  report.memory_limit = limit;
  for (int step = 0;; ++step) {
    const auto alias = analysis::HloAliasAnalysis::Run(module);
    const analysis::Sequences sequences = analysis::SequencesOf(module);
    const auto lr = analysis::HloLiveRange::Run(*alias, sequences);
    const std::vector<analysis::TemporaryGroup> groups = analysis::GroupTemporaries(*lr);
    const analysis::MemoryPeak peak = analysis::PeakOf(groups);
    if (step == 0) report.peak_before = peak.bytes;
    report.peak_after = peak.bytes;
    if (peak.bytes <= limit) return report;
    const int64_t t = peak.time;

    // What is live at the peak, by buffer.
    absl::flat_hash_map<const HloBuffer*, bool> live_at_peak;
    for (const analysis::TemporaryGroup& g : groups) {
      if (g.range.start <= t && t <= g.range.end)
        for (const HloBuffer* b : g.buffers) live_at_peak[b] = true;
    }
    Candidate best;
    for (const auto& [b, live] : live_at_peak) {
      if (b->values().size() != 1) continue;
      const HloValue* v = b->values()[0];
      HloInstruction* i = v->instruction();
      const analysis::LiveRange& r = lr->value_range(*v);
      if (v->live_out() || r.start >= t || i == i->parent()->root()) continue;
      // An output of a multi-output fusion, read through get-tuple-elements.
      const bool split = v->index().size() == 1 && i->opcode() == HloOpcode::kFusion &&
                         i->called_computations().at(0)->root()->opcode() == HloOpcode::kTuple;
      const int64_t output = split ? v->index()[0] : -1;
      if (split) {
        if (!CheapOutput(*i, output)) continue;
        bool only_gtes = true;
        for (const analysis::HloPosition& pos : v->positions()) {
          const HloInstruction* at = pos.instruction;
          only_gtes &= at == i || (at->opcode() == HloOpcode::kGetTupleElement &&
                                   at->operand(0) == i && pos.index.empty() &&
                                   at->attributes().Get<int64_t>(hlo::AttrKey::kIndex) == output);
        }
        if (!only_gtes) continue;
      } else if (!v->index().empty() || v->positions().size() != 1 || !Cheap(*i)) {
        continue;
      }
      std::vector<HloInstruction*> late, late_gtes;
      bool read_at_peak = false, unsplittable = false;
      for (const analysis::HloUse& u : v->uses()) {
        const int64_t at = lr->time_in(u.instruction);
        read_at_peak |= at <= t && t <= lr->time_out(u.instruction);
        if (at <= t) continue;
        if (std::find(late.begin(), late.end(), u.instruction) == late.end())
          late.push_back(u.instruction);
        if (split) {
          HloInstruction* gte = OutputRead(u, i, output);
          unsplittable |= gte == nullptr;
          if (gte != nullptr &&
              std::find(late_gtes.begin(), late_gtes.end(), gte) == late_gtes.end())
            late_gtes.push_back(gte);
        }
      }
      if (read_at_peak || late.empty() || unsplittable) continue;
      // Operand buffers that would have to live across the peak.
      std::vector<const HloInstruction*> reads;
      if (split) {
        for (const HloInstruction* n : NeededFor(*i, output)) {
          if (n->opcode() == HloOpcode::kParameter)
            reads.push_back(i->operand(n->parameter_number()));
        }
      } else {
        reads.assign(i->operands().begin(), i->operands().end());
      }
      int64_t added = 0;
      std::vector<const HloBuffer*> counted;
      for (const HloInstruction* o : reads) {
        const HloBuffer& ob = alias->BufferAt(o, {});
        if (analysis::KindOf(ob) != analysis::BufferKind::kTemporary || live_at_peak.contains(&ob))
          continue;
        if (std::find(counted.begin(), counted.end(), &ob) != counted.end()) continue;
        counted.push_back(&ob);
        added += ob.bytes();
      }
      const int64_t saved = b->bytes() - added;
      if (saved > best.saved || (saved == best.saved && best.instruction != nullptr &&
                                 i->unique_id() < best.instruction->unique_id())) {
        best = {i, saved, late, output, late_gtes};
      }
    }
    if (best.instruction == nullptr) {
      // Name the biggest values live at the peak.
      std::vector<const HloBuffer*> live;
      for (const auto& [b, unused] : live_at_peak) live.push_back(b);
      std::sort(live.begin(), live.end(), [](const HloBuffer* x, const HloBuffer* y) {
        return x->bytes() != y->bytes() ? x->bytes() > y->bytes() : x->id() < y->id();
      });
      std::string names;
      for (size_t k = 0; k < live.size() && k < 5; ++k)
        names += (k ? ", " : "") + live[k]->values()[0]->ToShortString() + " (" +
                 std::to_string(live[k]->bytes()) + " bytes)";
      const HloInstruction* at =
          t < static_cast<int64_t>(lr->timeline().size()) ? lr->timeline()[t] : nullptr;
      throw MemoryLimitError("cannot bring the peak of temporaries under " + std::to_string(limit) +
                             " bytes: it is " + std::to_string(peak.bytes) + " bytes" +
                             (at != nullptr ? " at %" + at->name() : std::string()) + " after " +
                             std::to_string(report.remats.size()) +
                             " rematerializations, and nothing live there " +
                             "can be recomputed to save memory; live there: " + names);
    }
    // Clone it (or split its output out) right before its first late user;
    // late users read the clone.
    HloInstruction* i = best.instruction;
    HloComputation* c = i->parent();
    HloInstruction* clone =
        best.output >= 0
            ? SplitOutput(i, best.output)
            : c->AddInstruction(i->CloneWithNewOperands(i->shape(), i->operands(), "remat"));
    std::vector<HloInstruction*> seq = *module.schedule().sequence(*c);
    int64_t first = static_cast<int64_t>(seq.size());
    for (HloInstruction* u : best.late_users)
      first = std::min<int64_t>(first, std::find(seq.begin(), seq.end(), u) - seq.begin());
    seq.insert(seq.begin() + first, clone);
    if (best.output >= 0) {
      for (HloInstruction* u : best.late_users) {
        for (HloInstruction* gte : best.late_gtes) u->ReplaceUsesOfOperand(gte, clone);
      }
      for (HloInstruction* gte : best.late_gtes) {
        if (!gte->users().empty() || gte == c->root()) continue;
        seq.erase(std::find(seq.begin(), seq.end(), gte));
        c->RemoveInstruction(gte);
      }
    } else {
      for (HloInstruction* u : best.late_users) u->ReplaceUsesOfOperand(i, clone);
    }
    module.mutable_schedule().set_sequence(*c, std::move(seq));
    report.remats.push_back({i->name(), clone->name(), best.saved, best.output});
  }
}

}  // namespace uir::schedule
