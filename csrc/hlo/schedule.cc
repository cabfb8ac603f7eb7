// HloSchedule: sequences per computation, updated after edits and checked.
#include "hlo/schedule.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "hlo/module.h"
#include "support/error.h"

namespace uir::hlo {
namespace {

// `sequence` without removed instructions, with the live instructions it
// lacks placed right after the last of their dependencies. A topological
// sort whose priority is each instruction's old position (new ones: just
// after their latest dependency), so a still-valid sequence comes back
// unchanged and the result is always a valid order.
std::vector<HloInstruction*> UpdatedSequence(const HloComputation& c,
                                             const std::vector<HloInstruction*>& sequence) {
  std::unordered_map<const HloInstruction*, int64_t> key;
  int64_t pos = 0;
  for (HloInstruction* i : sequence) {
    if (!i->is_removed() && i->parent() == &c && !key.count(i)) key[i] = 2 * pos++;
  }
  const std::vector<HloInstruction*> post = c.MakeInstructionPostOrder();
  if (static_cast<int64_t>(key.size()) == c.instruction_count()) {
    bool valid = true;
    for (HloInstruction* i : post) {
      for (HloInstruction* o : i->operands()) valid = valid && key.at(o) < key.at(i);
      for (HloInstruction* p : i->control_predecessors()) valid = valid && key.at(p) < key.at(i);
      if (!valid) break;
    }
    if (valid) {
      std::vector<HloInstruction*> out;
      for (HloInstruction* i : sequence) {
        if (!i->is_removed() && i->parent() == &c) out.push_back(i);
      }
      return out;
    }
  }
  std::unordered_map<const HloInstruction*, int64_t> post_index;
  for (size_t n = 0; n < post.size(); ++n) post_index[post[n]] = static_cast<int64_t>(n);
  for (HloInstruction* i : post) {
    if (key.count(i)) continue;
    int64_t k = -1;
    for (HloInstruction* o : i->operands()) k = std::max(k, key.at(o));
    for (HloInstruction* p : i->control_predecessors()) k = std::max(k, key.at(p));
    key[i] = k + 1;
  }
  // Kahn's algorithm over (key, post-order index).
  std::unordered_map<const HloInstruction*, int64_t> pending;
  using Item = std::pair<std::pair<int64_t, int64_t>, HloInstruction*>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (HloInstruction* i : post) {
    std::unordered_set<const HloInstruction*> deps(i->operands().begin(), i->operands().end());
    deps.insert(i->control_predecessors().begin(), i->control_predecessors().end());
    pending[i] = static_cast<int64_t>(deps.size());
    if (deps.empty()) ready.push({{key.at(i), post_index.at(i)}, i});
  }
  std::vector<HloInstruction*> out;
  out.reserve(post.size());
  while (!ready.empty()) {
    HloInstruction* i = ready.top().second;
    ready.pop();
    out.push_back(i);
    std::unordered_set<const HloInstruction*> dependents;
    for (HloInstruction* u : i->users()) {
      if (u->parent() == &c && dependents.insert(u).second && --pending[u] == 0)
        ready.push({{key.at(u), post_index.at(u)}, u});
    }
    for (HloInstruction* s : i->control_successors()) {
      if (s->parent() == &c && dependents.insert(s).second && --pending[s] == 0)
        ready.push({{key.at(s), post_index.at(s)}, s});
    }
  }
  return out;
}

}  // namespace

const std::vector<HloInstruction*>* HloSchedule::sequence(const HloComputation& c) const {
  auto it = sequences_.find(c.unique_id());
  return it == sequences_.end() ? nullptr : &it->second;
}

void HloSchedule::set_sequence(const HloComputation& c, std::vector<HloInstruction*> sequence) {
  sequences_[c.unique_id()] = std::move(sequence);
}

void HloSchedule::Update(const HloModule& module) {
  std::map<int64_t, std::vector<HloInstruction*>> updated;
  for (const auto& c : module.computations()) {
    auto it = sequences_.find(c->unique_id());
    updated[c->unique_id()] =
        it == sequences_.end() ? c->MakeInstructionPostOrder() : UpdatedSequence(*c, it->second);
  }
  sequences_ = std::move(updated);
}

void HloSchedule::Verify(const HloModule& module) const {
  for (const auto& c : module.computations()) {
    const auto* seq = sequence(*c);
    if (seq == nullptr) throw VerifyError(c->name(), "the schedule has no sequence for it");
    std::unordered_set<const HloInstruction*> placed;
    for (const HloInstruction* i : *seq) {
      if (i->is_removed() || i->parent() != c.get()) {
        throw VerifyError(c->name(),
                          "the schedule is stale: it holds an instruction the "
                          "computation no longer has");
      }
      if (!placed.insert(i).second) throw VerifyError(i->name(), "is scheduled twice");
      for (const HloInstruction* o : i->operands()) {
        if (!placed.count(o))
          throw VerifyError(i->name(), "is scheduled before its operand %" + o->name());
      }
      for (const HloInstruction* p : i->control_predecessors()) {
        if (!placed.count(p)) {
          throw VerifyError(i->name(), "is scheduled before its control predecessor %" + p->name());
        }
      }
    }
    if (static_cast<int64_t>(placed.size()) != c->instruction_count()) {
      for (const HloInstruction* i : c->instructions()) {
        if (!placed.count(i))
          throw VerifyError(i->name(), "is not in the schedule (the schedule is stale)");
      }
    }
  }
}

}  // namespace uir::hlo
