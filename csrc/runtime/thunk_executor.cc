// The thunk DAG: edges from overlapping uses, run in order or on oneTBB.
#include "runtime/thunk_executor.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "runtime/profiler.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::runtime {
namespace {

// Whether `t` is ordered or runs an ordered thunk (a host call inside a
// loop's body or a branch): such a thunk keeps its place among the
// ordered ones, so host calls run in program order wherever they sit.
bool HoldsOrdered(const Thunk& t) {
  if (t.ordered()) return true;
  for (const ThunkExecutor* nested : t.nested()) {
    for (const auto& inner : nested->thunks()) {
      if (HoldsOrdered(*inner)) return true;
    }
  }
  return false;
}

}  // namespace

ThunkExecutor ThunkExecutor::Create(ThunkSequence thunks, const ThunkExecutorOptions& options) {
  ThunkExecutor e;
  const size_t n = thunks.size();
  for (const auto& t : thunks) UIR_CHECK(t != nullptr) << "a thunk sequence holds a null thunk";
  e.successors_.resize(n);
  e.predecessors_.resize(n);
  e.in_degree_.assign(n, 0);
  // Earlier uses by allocation: a new use depends on each it overlaps
  // where either writes.
  struct Earlier {
    int32_t thunk;
    BufferUse use;
  };
  absl::flat_hash_map<int64_t, std::vector<Earlier>> by_allocation;
  int32_t last_ordered = -1;
  std::vector<int32_t> seen(n, -1);  // seen[i] == j: edge i -> j recorded
  for (size_t j = 0; j < n; ++j) {
    const auto jj = static_cast<int32_t>(j);
    auto edge = [&](int32_t i) {
      if (seen[static_cast<size_t>(i)] == jj) return;
      seen[static_cast<size_t>(i)] = jj;
      e.successors_[static_cast<size_t>(i)].push_back(jj);
      e.predecessors_[j].push_back(i);
      ++e.in_degree_[j];
    };
    const Thunk& t = *thunks[j];
    if (HoldsOrdered(t)) {
      if (last_ordered >= 0) edge(last_ordered);
      last_ordered = jj;
    }
    // An async-done blocks its thread until the work is done: it waits for
    // everything the schedule put before it, so it takes no worker from
    // that work.
    if (t.kind() == Thunk::Kind::kAsyncDone) {
      for (int32_t i = 0; i < jj; ++i) edge(i);
    }
    for (const BufferUse& u : t.buffer_uses()) {
      if (u.slice.size == 0) continue;
      auto it = by_allocation.find(u.slice.allocation);
      if (it == by_allocation.end()) continue;
      for (const Earlier& earlier : it->second) {
        if (earlier.thunk == jj) continue;
        const bool write = u.access == BufferUse::Access::kWrite ||
                           earlier.use.access == BufferUse::Access::kWrite;
        if (write && earlier.use.slice.Overlaps(u.slice)) edge(earlier.thunk);
      }
    }
    for (const BufferUse& u : t.buffer_uses()) {
      if (u.slice.size == 0) continue;
      std::vector<Earlier>& earlier = by_allocation[u.slice.allocation];
      if (u.access == BufferUse::Access::kWrite) {
        // Whoever conflicts with a use this write covers conflicts with the
        // write too, which waits for that use: the use need not be kept
        // (fewer edges, none lost transitively).
        std::erase_if(earlier, [&](const Earlier& e) {
          return e.thunk != jj && e.use.slice.offset >= u.slice.offset &&
                 e.use.slice.offset + e.use.slice.size <= u.slice.offset + u.slice.size;
        });
      }
      earlier.push_back({jj, u});
    }
  }
  for (auto& p : e.predecessors_) std::sort(p.begin(), p.end());
  // Concurrency pays only where a thunk is independent of a neighbour (else
  // the order is total) and such thunks move enough bytes: the bytes they
  // move, not the slices they may reach (an in-place scatter of one
  // element into a 400 KB array moves a few bytes).
  int64_t independent_bytes = 0;
  for (size_t j = 1; j < n; ++j) {
    const auto& p = e.predecessors_[j];
    if (!std::binary_search(p.begin(), p.end(), static_cast<int32_t>(j - 1))) {
      independent_bytes += thunks[j - 1]->BytesMoved() + thunks[j]->BytesMoved();
    }
  }
  for (const auto& t : thunks) e.meets_others_ = e.meets_others_ || t->MeetsOthers();
  e.sequential_ = NumThreads() == 1 || independent_bytes == 0 ||
                  independent_bytes < options.concurrent_bytes || e.meets_others_;
  e.thunks_ = std::move(thunks);
  return e;
}

namespace {

// Runs `t`, recording its time when the run is profiled; the sequences
// it runs itself see one more level of nesting.
void RunThunk(const Thunk& t, const ExecuteParams& params) {
  if (params.profiler == nullptr) {
    t.Execute(params);
    return;
  }
  ExecuteParams inner = params;
  inner.depth = params.depth + 1;
  params.profiler->Time(&t, CurrentThreadIndex(), params.depth, /*chunk=*/false,
                        [&] { t.Execute(inner); });
}

}  // namespace

void ThunkExecutor::Execute(const ExecuteParams& params) const {
  if (sequential_) {
    for (const auto& t : thunks_) RunThunk(*t, params);
    return;
  }
  struct Context {
    const ThunkExecutor* self;
    const ExecuteParams* params;
  } context{this, &params};
  RunDag(
      successors_, in_degree_,
      [](void* ctx, int64_t task) {
        auto* c = static_cast<Context*>(ctx);
        RunThunk(*c->self->thunks_[static_cast<size_t>(task)], *c->params);
      },
      &context);
}

int64_t ThunkExecutor::num_sources() const {
  return std::count(in_degree_.begin(), in_degree_.end(), 0);
}

std::vector<BufferUse> ThunkExecutor::BufferUses() const {
  // One use per slice; a slice written anywhere counts as written.
  std::vector<BufferUse> out;
  absl::flat_hash_map<std::tuple<int64_t, int64_t, int64_t>, size_t> index;
  for (const auto& t : thunks_) {
    for (const BufferUse& u : t->buffer_uses()) {
      const auto [it, added] =
          index.try_emplace({u.slice.allocation, u.slice.offset, u.slice.size}, out.size());
      if (added) {
        out.push_back(u);
      } else if (u.access == BufferUse::Access::kWrite) {
        out[it->second].access = BufferUse::Access::kWrite;
      }
    }
  }
  return out;
}

void ThunkExecutor::AppendText(std::string& out, int indent) const {
  const std::string pad(static_cast<size_t>(indent), ' ');
  out += pad + std::to_string(thunks_.size()) + " thunks, ";
  out += sequential_ ? std::string("sequential")
                     : "concurrent: " + std::to_string(num_sources()) + " sources";
  out += '\n';
  for (size_t i = 0; i < thunks_.size(); ++i) {
    std::string line;
    thunks_[i]->AppendText(line, indent + 2);
    // "%3 " before the thunk's own text, "after ..." at the end of its line.
    const size_t first_end = line.find('\n');
    std::string head = line.substr(0, first_end);
    head.insert(static_cast<size_t>(indent + 2), "%" + std::to_string(i) + " ");
    if (!predecessors_[i].empty()) {
      head += " after";
      for (size_t k = 0; k < predecessors_[i].size(); ++k) {
        head += (k == 0 ? " %" : ", %") + std::to_string(predecessors_[i][k]);
      }
    }
    out += head;
    out += line.substr(first_end);
  }
}

std::string ThunkExecutor::ToText() const {
  std::string out;
  AppendText(out, 0);
  return out;
}

std::vector<BufferUse> UsesOf(const std::vector<const ThunkExecutor*>& sequences,
                              const std::vector<BufferUse>& extra) {
  std::vector<BufferUse> out = extra;
  for (const ThunkExecutor* s : sequences) {
    for (const BufferUse& u : s->BufferUses()) out.push_back(u);
  }
  return out;
}

}  // namespace uir::runtime
