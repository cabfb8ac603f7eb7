#include "schedule/memory_scheduler.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"
#include "passes/flatten_call_graph.h"

namespace uir::schedule {

using analysis::BufferKind;
using analysis::HloAliasAnalysis;
using analysis::HloBuffer;
using analysis::HloValue;
using analysis::Sequences;
using hlo::HloComputation;
using hlo::HloInstruction;

Algorithm AlgorithmByName(const std::string& name) {
  if (name == "list") return Algorithm::kList;
  if (name == "dfs") return Algorithm::kDfs;
  if (name == "postorder") return Algorithm::kPostOrder;
  if (name == "auto") return Algorithm::kAuto;
  throw std::invalid_argument("unknown scheduling algorithm '" + name +
                              "'; use 'list', 'dfs', 'postorder' or 'auto'");
}

std::string_view AlgorithmName(Algorithm a) {
  switch (a) {
    case Algorithm::kList:
      return "list";
    case Algorithm::kDfs:
      return "dfs";
    case Algorithm::kPostOrder:
      return "postorder";
    case Algorithm::kAuto:
      return "auto";
  }
  return "?";
}

namespace {

// What one computation's instructions define and read, in buffer terms.
struct ComputationBuffers {
  // Temporaries local to the computation: defined in it, not at its root,
  // not live out.
  absl::flat_hash_set<const HloBuffer*> local;
  absl::flat_hash_map<const HloInstruction*, int64_t> defined_bytes;
  absl::flat_hash_map<const HloInstruction*, std::vector<const HloBuffer*>> used;
  // Instructions of the computation that use or define each local buffer.
  absl::flat_hash_map<const HloBuffer*, int64_t> refs;
};

ComputationBuffers Describe(const HloAliasAnalysis& alias, const HloComputation& c) {
  const analysis::HloDataflowAnalysis& df = alias.dataflow();
  ComputationBuffers out;
  absl::flat_hash_set<const HloBuffer*> pinned;
  for (const HloValue* v : df.value_set(c.root()).values()) pinned.insert(&alias.BufferOf(*v));
  for (const HloInstruction* p : c.parameters())
    for (const HloValue* v : df.value_set(p).values()) pinned.insert(&alias.BufferOf(*v));
  for (const HloInstruction* i : c.instructions()) {
    for (const HloValue* v : df.value_set(i).values()) {
      if (v->instruction() != i) continue;
      const HloBuffer& b = alias.BufferOf(*v);
      if (analysis::KindOf(b) != BufferKind::kTemporary || pinned.contains(&b)) continue;
      bool foreign = false;
      for (const HloValue* w : b.values()) foreign |= w->instruction()->parent() != &c;
      if (!foreign) out.local.insert(&b);
    }
  }
  for (const HloInstruction* i : c.instructions()) {
    absl::flat_hash_set<const HloBuffer*> mine;
    absl::flat_hash_set<const HloBuffer*> operand_buffers;
    for (const HloInstruction* o : i->operands())
      for (const HloValue* v : df.value_set(o).values())
        operand_buffers.insert(&alias.BufferOf(*v));
    int64_t defined = 0;
    for (const HloValue* v : df.value_set(i).values()) {
      const HloBuffer& b = alias.BufferOf(*v);
      if (v->instruction() == i && !v->is_phi() && !operand_buffers.contains(&b) &&
          analysis::KindOf(b) == BufferKind::kTemporary)
        defined += v->bytes();
      if (out.local.contains(&b)) mine.insert(&b);
    }
    out.defined_bytes[i] = defined;
    std::vector<const HloBuffer*>& used = out.used[i];
    for (const HloInstruction* o : i->operands()) {
      for (const HloValue* v : df.value_set(o).values()) {
        const HloBuffer& b = alias.BufferOf(*v);
        if (!out.local.contains(&b)) continue;
        bool reads = false;
        for (const analysis::HloUse& u : v->uses()) reads |= u.instruction == i;
        if (reads && std::find(used.begin(), used.end(), &b) == used.end()) used.push_back(&b);
        mine.insert(&b);
      }
    }
    for (const HloBuffer* b : mine) ++out.refs[b];
  }
  return out;
}

std::vector<HloInstruction*> ListScheduleComputation(const HloAliasAnalysis& alias,
                                                     const HloComputation& c) {
  ComputationBuffers bufs = Describe(alias, c);
  const std::vector<HloInstruction*> post = c.MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  for (size_t k = 0; k < post.size(); ++k) position[post[k]] = static_cast<int64_t>(k);
  absl::flat_hash_map<const HloInstruction*, int64_t> waiting;  // unscheduled predecessors
  for (const HloInstruction* i : post) {
    absl::flat_hash_set<const HloInstruction*> preds(i->operands().begin(), i->operands().end());
    preds.insert(i->control_predecessors().begin(), i->control_predecessors().end());
    waiting[i] = static_cast<int64_t>(preds.size());
  }
  // Users of each local buffer, to re-rank when a buffer's refs drop to one.
  absl::flat_hash_map<const HloBuffer*, std::vector<const HloInstruction*>> users;
  for (const HloInstruction* i : post)
    for (const HloBuffer* b : bufs.used[i]) users[b].push_back(i);

  auto priority = [&](const HloInstruction* i) {
    int64_t freed = 0;
    for (const HloBuffer* b : bufs.used[i])
      if (bufs.refs[b] == 1) freed += b->bytes();
    return freed - bufs.defined_bytes[i];
  };
  using Key = std::tuple<int64_t, int64_t, HloInstruction*>;  // (-priority, post order, i)
  std::set<Key> ready;
  absl::flat_hash_map<const HloInstruction*, int64_t> key_of;  // current -priority of ready ones
  auto push = [&](HloInstruction* i) {
    const int64_t p = -priority(i);
    key_of[i] = p;
    ready.insert({p, position[i], i});
  };
  for (HloInstruction* i : post)
    if (waiting[i] == 0) push(i);

  std::vector<HloInstruction*> out;
  out.reserve(post.size());
  absl::flat_hash_set<const HloInstruction*> done;
  while (!ready.empty()) {
    HloInstruction* i = std::get<2>(*ready.begin());
    ready.erase(ready.begin());
    key_of.erase(i);
    out.push_back(i);
    done.insert(i);
    // Its buffers lose a reference; a buffer left with one reader makes
    // that reader free it.
    absl::flat_hash_set<const HloBuffer*> touched;
    for (const HloValue* v : alias.dataflow().value_set(i).values())
      if (bufs.local.contains(&alias.BufferOf(*v))) touched.insert(&alias.BufferOf(*v));
    for (const HloBuffer* b : bufs.used[i]) touched.insert(b);
    for (const HloBuffer* b : touched) {
      if (--bufs.refs[b] != 1) continue;
      for (const HloInstruction* u : users[b]) {
        auto it = key_of.find(u);
        if (it == key_of.end()) continue;
        HloInstruction* mu = const_cast<HloInstruction*>(u);
        ready.erase({it->second, position[u], mu});
        push(mu);
      }
    }
    auto release = [&](HloInstruction* s) {
      if (--waiting[s] == 0) push(s);
    };
    absl::flat_hash_set<HloInstruction*> succs(i->users().begin(), i->users().end());
    succs.insert(i->control_successors().begin(), i->control_successors().end());
    std::vector<HloInstruction*> ordered(succs.begin(), succs.end());
    std::sort(ordered.begin(), ordered.end(),
              [&](auto* a, auto* b) { return position[a] < position[b]; });
    for (HloInstruction* s : ordered)
      if (s->parent() == &c) release(s);
  }
  return out;
}

std::vector<HloInstruction*> DfsScheduleComputation(const HloAliasAnalysis& alias,
                                                    const HloComputation& c) {
  const ComputationBuffers bufs = Describe(alias, c);
  const std::vector<HloInstruction*> post = c.MakeInstructionPostOrder();
  absl::flat_hash_map<const HloInstruction*, int64_t> extra_users;
  absl::flat_hash_map<const HloInstruction*, int64_t> total_bytes;
  absl::flat_hash_map<const HloInstruction*, int64_t> position;
  for (size_t k = 0; k < post.size(); ++k) {
    const HloInstruction* i = post[k];
    position[i] = static_cast<int64_t>(k);
    int64_t users = i->user_count() > 0 ? i->user_count() - 1 : 0;
    int64_t bytes = bufs.defined_bytes.at(i);
    for (const HloInstruction* o : i->operands()) {
      users += extra_users[o];
      bytes += total_bytes[o];
    }
    // Saturate: shared subgraphs are counted once per path.
    extra_users[i] = std::min<int64_t>(users, int64_t{1} << 40);
    total_bytes[i] = std::min<int64_t>(bytes, int64_t{1} << 60);
  }
  std::vector<HloInstruction*> out;
  out.reserve(post.size());
  absl::flat_hash_set<const HloInstruction*> visited;
  // Iterative DFS emitting in post order.
  auto visit = [&](HloInstruction* start) {
    struct Frame {
      HloInstruction* i;
      std::vector<HloInstruction*> next;
      size_t k = 0;
    };
    auto expand = [&](HloInstruction* i) {
      Frame f{i, {}, 0};
      for (HloInstruction* p : i->control_predecessors()) f.next.push_back(p);
      std::vector<HloInstruction*> ops(i->operands().begin(), i->operands().end());
      std::stable_sort(ops.begin(), ops.end(), [&](HloInstruction* a, HloInstruction* b) {
        if (extra_users[a] != extra_users[b]) return extra_users[a] > extra_users[b];
        if (total_bytes[a] != total_bytes[b]) return total_bytes[a] > total_bytes[b];
        return position[a] < position[b];
      });
      f.next.insert(f.next.end(), ops.begin(), ops.end());
      return f;
    };
    if (!visited.insert(start).second) return;
    std::vector<Frame> stack = {expand(start)};
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.k < f.next.size()) {
        HloInstruction* n = f.next[f.k++];
        if (visited.insert(n).second) stack.push_back(expand(n));
        continue;
      }
      out.push_back(f.i);
      stack.pop_back();
    }
  };
  visit(c.root());
  for (HloInstruction* i : post) visit(i);  // what the root does not reach
  return out;
}

template <typename F>
Sequences ForEachAnalysed(const HloAliasAnalysis& alias, F schedule) {
  Sequences out;
  for (const HloComputation* c : alias.dataflow().computations()) out[c] = schedule(alias, *c);
  return out;
}

}  // namespace

Sequences ListSchedule(const HloAliasAnalysis& alias) {
  return ForEachAnalysed(alias, ListScheduleComputation);
}

Sequences DfsSchedule(const HloAliasAnalysis& alias) {
  return ForEachAnalysed(alias, DfsScheduleComputation);
}

Sequences PostOrderSchedule(const HloAliasAnalysis& alias) {
  return ForEachAnalysed(alias, [](const HloAliasAnalysis&, const HloComputation& c) {
    return c.MakeInstructionPostOrder();
  });
}

void SetSchedule(hlo::HloModule& module, const Sequences& sequences) {
  hlo::HloSchedule schedule;
  for (const auto& c : module.computations()) {
    auto it = sequences.find(c.get());
    schedule.set_sequence(*c, it != sequences.end() ? it->second : c->MakeInstructionPostOrder());
  }
  module.set_schedule(std::move(schedule));
  module.mutable_config().is_scheduled = true;
}

std::string ScheduleReport::ToString() const {
  std::ostringstream os;
  os << "schedule: " << chosen << " (";
  for (size_t k = 0; k < peaks.size(); ++k) {
    os << (k ? ", " : "") << peaks[k].first << " peak " << peaks[k].second << " bytes";
  }
  os << ")";
  return os.str();
}

ScheduleReport ScheduleModule(hlo::HloModule& module, Algorithm algorithm) {
  const auto start = std::chrono::steady_clock::now();
  passes::FlattenCallGraph().Run(module);
  module.Cleanup();
  const auto alias = HloAliasAnalysis::Run(module);
  ScheduleReport report;
  std::vector<Algorithm> candidates =
      algorithm == Algorithm::kAuto
          ? std::vector<Algorithm>{Algorithm::kList, Algorithm::kDfs, Algorithm::kPostOrder}
          : std::vector<Algorithm>{algorithm};
  Sequences best;
  int64_t best_peak = -1;
  for (Algorithm a : candidates) {
    Sequences s = a == Algorithm::kList  ? ListSchedule(*alias)
                  : a == Algorithm::kDfs ? DfsSchedule(*alias)
                                         : PostOrderSchedule(*alias);
    const int64_t peak = analysis::SimulatePeak(*alias, s).bytes;
    report.peaks.emplace_back(std::string(AlgorithmName(a)), peak);
    if (best_peak < 0 || peak < best_peak) {
      best_peak = peak;
      best = std::move(s);
      report.chosen = std::string(AlgorithmName(a));
    }
  }
  SetSchedule(module, best);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace uir::schedule
