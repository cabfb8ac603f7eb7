#include "analysis/liveness.h"

#include <algorithm>

#include "analysis/in_place.h"
#include "hlo/computation.h"
#include "support/error.h"

namespace uir::analysis {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

Sequences SequencesOf(const hlo::HloModule& module) {
  Sequences out;
  for (const auto& c : module.computations()) {
    const std::vector<HloInstruction*>* seq =
        module.has_schedule() ? module.schedule().sequence(*c) : nullptr;
    out[c.get()] = seq != nullptr ? *seq : c->MakeInstructionPostOrder();
  }
  return out;
}

void HloLiveRange::Flatten(const HloComputation* c, const Sequences& sequences) {
  auto it = sequences.find(c);
  UIR_CHECK(it != sequences.end()) << "computation " << c->name() << " has no sequence";
  LiveRange& span = spans_[c];
  span.start = static_cast<int64_t>(timeline_.size());
  timeline_.push_back(nullptr);
  for (const HloInstruction* i : it->second) {
    const std::vector<HloComputation*> callees = HloDataflowAnalysis::SequentialCallees(*i);
    if (callees.empty()) {
      const auto t = static_cast<int64_t>(timeline_.size());
      timeline_.push_back(i);
      times_[i] = {t, t};
      continue;
    }
    const auto in = static_cast<int64_t>(timeline_.size());
    timeline_.push_back(nullptr);
    for (const HloComputation* callee : callees) Flatten(callee, sequences);
    const auto out = static_cast<int64_t>(timeline_.size());
    timeline_.push_back(i);
    times_[i] = {in, out};
  }
  spans_[c].end = static_cast<int64_t>(timeline_.size());
  timeline_.push_back(nullptr);
}

std::unique_ptr<HloLiveRange> HloLiveRange::Run(const HloAliasAnalysis& alias,
                                                const Sequences& sequences) {
  std::unique_ptr<HloLiveRange> lr(new HloLiveRange(alias));
  const HloDataflowAnalysis& df = alias.dataflow();
  const HloComputation* entry = df.module().entry();
  lr->Flatten(entry, sequences);
  lr->end_time_ = static_cast<int64_t>(lr->timeline_.size());
  for (const HloComputation* c : df.computations()) {
    UIR_CHECK(lr->spans_.contains(c)) << "computation " << c->name() << " is not in the timeline";
  }

  // Values of an async computation live until its async-done.
  absl::flat_hash_map<const HloComputation*, int64_t> async_end;
  for (const HloComputation* c : df.computations()) {
    for (const HloInstruction* caller = df.Caller(c); caller != nullptr;
         caller = df.Caller(caller->parent())) {
      if (caller->opcode() != HloOpcode::kAsyncStart) continue;
      if (const HloInstruction* done = AsyncDoneOf(*caller);
          done != nullptr && lr->times_.contains(done)) {
        async_end[c] = std::max(async_end[c], lr->time_in(done));
      }
    }
  }

  lr->value_ranges_.resize(df.values().size());
  for (const auto& v : df.values()) {
    LiveRange r{INT64_MAX, INT64_MIN};
    for (const HloPosition& p : v->positions()) {
      const HloInstruction* i = p.instruction;
      const HloComputation* c = i->parent();
      const int64_t at = i->opcode() == HloOpcode::kParameter ? (c == entry ? 0 : lr->span(c).start)
                                                              : lr->time_out(i);
      r.start = std::min(r.start, at);
      if (i == c->root()) r.end = std::max(r.end, lr->span(c).end);
    }
    r.end = std::max(r.end, r.start);
    for (const HloUse& u : v->uses()) r.end = std::max(r.end, lr->time_in(u.instruction));
    if (v->live_out()) r.end = lr->end_time_;
    if (auto it = async_end.find(v->instruction()->parent()); it != async_end.end())
      r.end = std::max(r.end, it->second);
    lr->value_ranges_[v->id()] = r;
  }
  lr->buffer_ranges_.resize(alias.buffers().size());
  for (const HloBuffer& b : alias.buffers()) {
    LiveRange r{INT64_MAX, INT64_MIN};
    for (const HloValue* v : b.values()) {
      r.start = std::min(r.start, lr->value_ranges_[v->id()].start);
      r.end = std::max(r.end, lr->value_ranges_[v->id()].end);
    }
    lr->buffer_ranges_[b.id()] = r;
  }
  return lr;
}

bool IsAsyncStart(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAsyncStart:
    case HloOpcode::kCopyStart:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kCollectivePermuteStart:
      return true;
    default:
      return false;
  }
}

bool IsAsyncDone(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAsyncDone:
    case HloOpcode::kCopyDone:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      return true;
    default:
      return false;
  }
}

const HloInstruction* AsyncDoneOf(const HloInstruction& start) {
  if (!IsAsyncStart(start.opcode())) return nullptr;
  const HloInstruction* x = &start;
  for (int step = 0; step < 1 << 20; ++step) {
    const HloInstruction* next = nullptr;
    for (const HloInstruction* u : x->users()) {
      if (IsAsyncDone(u->opcode())) return u;
      if (u->opcode() == HloOpcode::kAsyncUpdate) next = u;
    }
    if (next == nullptr) return nullptr;
    x = next;
  }
  return nullptr;
}

std::string_view BufferKindName(BufferKind kind) {
  switch (kind) {
    case BufferKind::kParameter:
      return "parameter";
    case BufferKind::kConstant:
      return "constant";
    case BufferKind::kOutput:
      return "output";
    case BufferKind::kTemporary:
      return "temporary";
  }
  return "?";
}

BufferKind KindOf(const HloBuffer& b) {
  if (b.has_entry_parameter()) return BufferKind::kParameter;
  if (b.has_constant()) return BufferKind::kConstant;
  if (b.live_out()) return BufferKind::kOutput;
  return BufferKind::kTemporary;
}

std::vector<TemporaryGroup> GroupTemporaries(const HloLiveRange& lr) {
  const HloAliasAnalysis& alias = lr.alias();
  const HloDataflowAnalysis& df = alias.dataflow();
  std::vector<TemporaryGroup> groups;
  std::vector<int64_t> group_of(alias.buffers().size(), -1);
  // Buffers in order of their start, so an operand's group exists before
  // the result that may join it.
  std::vector<const HloBuffer*> order;
  for (const HloBuffer& b : alias.buffers()) {
    if (b.bytes() > 0 && KindOf(b) == BufferKind::kTemporary) order.push_back(&b);
  }
  std::stable_sort(order.begin(), order.end(), [&](const HloBuffer* a, const HloBuffer* b) {
    return lr.buffer_range(*a).start < lr.buffer_range(*b).start;
  });
  for (const HloBuffer* b : order) {
    const LiveRange& r = lr.buffer_range(*b);
    int64_t join = -1;
    // The buffer's first value, defined at {} by an op that may share.
    const HloValue* first = b->values().front();
    for (const HloValue* v : b->values())
      if (lr.value_range(*v).start < lr.value_range(*first).start) first = v;
    const HloInstruction* user = first->instruction();
    if (first->index().empty() && !first->is_phi() && lr.value_range(*first).start == r.start &&
        df.IsAnalysed(user->parent())) {
      for (int64_t k = 0; k < user->operand_count() && join < 0; ++k) {
        if (!CanShareOperandBuffer(*user, k)) continue;
        const HloBuffer& a = alias.BufferAt(user->operand(k), {});
        const int64_t g = group_of[a.id()];
        if (g < 0 || &a == b) continue;
        if (lr.buffer_range(a).end != r.start || groups[g].range.end != r.start) continue;
        if (groups[g].bytes != b->bytes()) continue;
        join = g;
      }
    }
    if (join < 0) {
      join = static_cast<int64_t>(groups.size());
      groups.push_back({{}, b->bytes(), r});
    }
    TemporaryGroup& g = groups[join];
    g.buffers.push_back(b);
    g.range.start = std::min(g.range.start, r.start);
    g.range.end = std::max(g.range.end, r.end);
    group_of[b->id()] = join;
  }
  return groups;
}

MemoryPeak PeakOf(const std::vector<TemporaryGroup>& groups) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (time, +bytes at start / -bytes after end)
  events.reserve(groups.size() * 2);
  for (const TemporaryGroup& g : groups) {
    events.emplace_back(g.range.start, g.bytes);
    events.emplace_back(g.range.end + 1, -g.bytes);
  }
  std::sort(events.begin(), events.end());  // frees (negative) before allocations at one time
  MemoryPeak peak;
  int64_t live = 0;
  for (size_t i = 0; i < events.size();) {
    const int64_t t = events[i].first;
    for (; i < events.size() && events[i].first == t; ++i) live += events[i].second;
    if (live > peak.bytes) peak = {live, t};
  }
  return peak;
}

MemoryPeak SimulatePeak(const HloAliasAnalysis& alias, const Sequences& sequences) {
  return PeakOf(GroupTemporaries(*HloLiveRange::Run(alias, sequences)));
}

}  // namespace uir::analysis
