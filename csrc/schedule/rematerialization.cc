#include "schedule/rematerialization.h"

#include <algorithm>
#include <sstream>

#include "analysis/liveness.h"
#include "hlo/computation.h"
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
  for (const Remat& r : remats)
    os << "  %" << r.instruction << " recomputed as %" << r.clone << ", " << r.bytes_saved
       << " bytes saved at the peak\n";
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

struct Candidate {
  HloInstruction* instruction = nullptr;
  int64_t saved = 0;
  std::vector<HloInstruction*> late_users;
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
      if (!v->index().empty() || v->positions().size() != 1 || v->live_out() || r.start >= t ||
          i == i->parent()->root() || !Cheap(*i))
        continue;
      std::vector<HloInstruction*> late;
      bool read_at_peak = false;
      for (const analysis::HloUse& u : v->uses()) {
        const int64_t at = lr->time_in(u.instruction);
        read_at_peak |= at <= t && t <= lr->time_out(u.instruction);
        if (at > t && std::find(late.begin(), late.end(), u.instruction) == late.end())
          late.push_back(u.instruction);
      }
      if (read_at_peak || late.empty()) continue;
      // Operand buffers that would have to live across the peak.
      int64_t added = 0;
      std::vector<const HloBuffer*> counted;
      for (const HloInstruction* o : i->operands()) {
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
        best = {i, saved, late};
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
    // Clone it right before its first late user; late users read the clone.
    HloInstruction* i = best.instruction;
    HloComputation* c = i->parent();
    HloInstruction* clone =
        c->AddInstruction(i->CloneWithNewOperands(i->shape(), i->operands(), "remat"));
    std::vector<HloInstruction*> seq = *module.schedule().sequence(*c);
    int64_t first = static_cast<int64_t>(seq.size());
    for (HloInstruction* u : best.late_users)
      first = std::min<int64_t>(first, std::find(seq.begin(), seq.end(), u) - seq.begin());
    seq.insert(seq.begin() + first, clone);
    for (HloInstruction* u : best.late_users) u->ReplaceUsesOfOperand(i, clone);
    module.mutable_schedule().set_sequence(*c, std::move(seq));
    report.remats.push_back({i->name(), clone->name(), best.saved});
  }
}

}  // namespace uir::schedule
