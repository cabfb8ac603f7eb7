#include "runtime/collectives.h"

#include <algorithm>
#include <complex>
#include <cstring>

#include "runtime/fold.h"
#include "runtime/narrow_float.h"
#include "support/error.h"

namespace uir::runtime {
namespace {

template <typename T, FoldOp Op>
void FoldLoop(void* acc, const void* x, int64_t count) {
  T* a = static_cast<T*>(acc);
  const T* b = static_cast<const T*>(x);
  for (int64_t i = 0; i < count; ++i) a[i] = Apply<T, Op>(a[i], b[i]);
}

template <typename T>
void FoldTyped(FoldOp op, void* acc, const void* x, int64_t count) {
  switch (op) {
    case FoldOp::kAdd:
      return FoldLoop<T, FoldOp::kAdd>(acc, x, count);
    case FoldOp::kMultiply:
      return FoldLoop<T, FoldOp::kMultiply>(acc, x, count);
    case FoldOp::kMaximum:
      return FoldLoop<T, FoldOp::kMaximum>(acc, x, count);
    case FoldOp::kMinimum:
      return FoldLoop<T, FoldOp::kMinimum>(acc, x, count);
    case FoldOp::kAnd:
      return FoldLoop<T, FoldOp::kAnd>(acc, x, count);
    case FoldOp::kOr:
      return FoldLoop<T, FoldOp::kOr>(acc, x, count);
  }
}

std::string GroupsText(const std::vector<std::vector<int>>& groups) {
  // Each distinct group once, in the order of its first member.
  std::vector<const std::vector<int>*> seen;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    bool known = false;
    for (const auto* s : seen) known = known || *s == g;
    if (!known) seen.push_back(&g);
  }
  std::string s = "{";
  for (size_t i = 0; i < seen.size(); ++i) {
    s += i ? ",{" : "{";
    for (size_t j = 0; j < seen[i]->size(); ++j) {
      s += (j ? "," : "") + std::to_string((*seen[i])[j]);
    }
    s += "}";
  }
  return s + "}";
}

}  // namespace

bool FoldSupported(PrimitiveType type, FoldOp op) { return WindowTypeSupported(type, op); }

void FoldInto(PrimitiveType type, FoldOp op, void* acc, const void* x, int64_t count) {
  using P = PrimitiveType;
  switch (type) {
    case P::kPred:
      return FoldTyped<bool>(op, acc, x, count);
    case P::kS8:
      return FoldTyped<int8_t>(op, acc, x, count);
    case P::kS16:
      return FoldTyped<int16_t>(op, acc, x, count);
    case P::kS32:
      return FoldTyped<int32_t>(op, acc, x, count);
    case P::kS64:
      return FoldTyped<int64_t>(op, acc, x, count);
    case P::kU8:
      return FoldTyped<uint8_t>(op, acc, x, count);
    case P::kU16:
      return FoldTyped<uint16_t>(op, acc, x, count);
    case P::kU32:
      return FoldTyped<uint32_t>(op, acc, x, count);
    case P::kU64:
      return FoldTyped<uint64_t>(op, acc, x, count);
    case P::kF32:
      if (op == FoldOp::kAnd || op == FoldOp::kOr) break;
      return FoldTyped<float>(op, acc, x, count);
    case P::kF64:
      if (op == FoldOp::kAnd || op == FoldOp::kOr) break;
      return FoldTyped<double>(op, acc, x, count);
    case P::kC64:
      if (op != FoldOp::kAdd && op != FoldOp::kMultiply) break;
      return FoldTyped<std::complex<float>>(op, acc, x, count);
    case P::kC128:
      if (op != FoldOp::kAdd && op != FoldOp::kMultiply) break;
      return FoldTyped<std::complex<double>>(op, acc, x, count);
    case P::kF16:
    case P::kBF16: {
      if (op == FoldOp::kAnd || op == FoldOp::kOr) break;
      // Each step exact in f32 and rounded once, as a step in the type.
      constexpr int64_t kChunk = 2048;
      float a[kChunk], b[kChunk];
      auto* out = static_cast<uint8_t*>(acc);
      const auto* in = static_cast<const uint8_t*>(x);
      for (int64_t at = 0; at < count; at += kChunk) {
        const int64_t c = std::min(kChunk, count - at);
        WidenToF32(type, out + 2 * at, c, a);
        WidenToF32(type, in + 2 * at, c, b);
        FoldTyped<float>(op, a, b, c);
        NarrowFromF32(type, a, c, out + 2 * at);
      }
      return;
    }
    default:
      break;
  }
  throw UnimplementedError(std::string(FoldOpName(op)) + " of " +
                           std::string(PrimitiveTypeName(type)) + " in a collective");
}

int CollectivePlan::IndexIn(int participant) const {
  const std::vector<int>& g = GroupOf(participant);
  return static_cast<int>(std::find(g.begin(), g.end(), participant) - g.begin());
}

std::string_view CollectivePlan::OpName(Op op) {
  switch (op) {
    case Op::kAllReduce:
      return "all-reduce";
    case Op::kAllGather:
      return "all-gather";
    case Op::kReduceScatter:
      return "reduce-scatter";
    case Op::kAllToAll:
      return "all-to-all";
    case Op::kPermute:
      return "collective-permute";
    case Op::kBroadcast:
      return "collective-broadcast";
    case Op::kReplicaId:
      return "replica-id";
    case Op::kPartitionId:
      return "partition-id";
  }
  return "?";
}

std::string CollectivePlan::ToString() const {
  std::string s(OpName(op));
  if (op == Op::kAllReduce || op == Op::kReduceScatter) s += " " + std::string(FoldOpName(fold));
  s += " " + std::string(PrimitiveTypeName(type));
  if (op == Op::kReplicaId || op == Op::kPartitionId) return s;
  s += " [" + std::to_string(outer) + "," + std::to_string(dim) + "," + std::to_string(inner) + "]";
  if (op == Op::kPermute) {
    s += " pairs {";
    bool first = true;
    for (size_t p = 0; p < send_to.size(); ++p) {
      if (send_to[p] < 0) continue;
      s += (first ? "{" : ",{") + std::to_string(p) + "," + std::to_string(send_to[p]) + "}";
      first = false;
    }
    return s + "}";
  }
  return s + " groups " + GroupsText(groups);
}

// ---------------------------------------------------------------------------
// In-process participants.

struct InProcessClique::Meeting {
  std::vector<int> group;
  std::vector<const void*> ins;
  std::vector<bool> arrived_at, departed_at;
  int arrived = 0, departed = 0;
  int64_t run = 0;
  std::tuple<int64_t, int, int64_t> key;
};

class InProcessClique::Member_ final : public Communicator {
 public:
  Member_(InProcessClique* clique, int rank) : clique_(clique), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return clique_->n_; }

  void Prepare(uint64_t program, std::span<const CollectivePlan* const> /*plans*/) override {
    std::vector<int> everyone(static_cast<size_t>(clique_->n_));
    for (int i = 0; i < clique_->n_; ++i) everyone[static_cast<size_t>(i)] = i;
    auto m = clique_->Arrive(-1, "the start of the run", everyone, rank_, &program, nullptr);
    int other = -1;
    uint64_t theirs = 0;
    for (int i = 0; i < clique_->n_ && other < 0; ++i) {
      theirs = *static_cast<const uint64_t*>(m->ins[static_cast<size_t>(i)]);
      if (theirs != program) other = i;
    }
    clique_->Depart(m, "the start of the run", rank_);
    if (other >= 0) {
      throw DistributedError("participant " + std::to_string(other) +
                             " runs another program than participant " + std::to_string(rank_) +
                             " (fingerprints " + Hex(theirs) + " and " + Hex(program) + ")");
    }
  }

  void AllReduce(const CollectivePlan& plan, const void* in, void* out, int64_t count) override {
    Meet(plan, in, out, [&](const std::vector<const void*>& ins, int) {
      const int64_t bytes = count * plan.element_bytes();
      std::memcpy(out, ins[0], static_cast<size_t>(bytes));
      for (size_t k = 1; k < ins.size(); ++k) FoldInto(plan.type, plan.fold, out, ins[k], count);
    });
  }
  void AllGather(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    Meet(plan, in, out, [&](const std::vector<const void*>& ins, int) {
      for (size_t k = 0; k < ins.size(); ++k) {
        std::memcpy(static_cast<uint8_t*>(out) + static_cast<int64_t>(k) * bytes, ins[k],
                    static_cast<size_t>(bytes));
      }
    });
  }
  void ReduceScatter(const CollectivePlan& plan, const void* in, void* out,
                     int64_t count) override {
    Meet(plan, in, out, [&](const std::vector<const void*>& ins, int me) {
      const int64_t bytes = count * plan.element_bytes();
      auto block = [&](size_t k) { return static_cast<const uint8_t*>(ins[k]) + me * bytes; };
      std::memcpy(out, block(0), static_cast<size_t>(bytes));
      for (size_t k = 1; k < ins.size(); ++k) FoldInto(plan.type, plan.fold, out, block(k), count);
    });
  }
  void AllToAll(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    Meet(plan, in, out, [&](const std::vector<const void*>& ins, int me) {
      for (size_t k = 0; k < ins.size(); ++k) {
        std::memcpy(static_cast<uint8_t*>(out) + static_cast<int64_t>(k) * bytes,
                    static_cast<const uint8_t*>(ins[k]) + me * bytes, static_cast<size_t>(bytes));
      }
    });
  }
  void Permute(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    std::vector<int> everyone(static_cast<size_t>(clique_->n_));
    for (int i = 0; i < clique_->n_; ++i) everyone[static_cast<size_t>(i)] = i;
    auto m = clique_->Arrive(plan.id, "%" + plan.name, everyone, rank_, in, out);
    const int from = plan.receive_from[static_cast<size_t>(rank_)];
    if (from >= 0) std::memcpy(out, m->ins[static_cast<size_t>(from)], static_cast<size_t>(bytes));
    clique_->Depart(m, "%" + plan.name, rank_);
  }
  void Broadcast(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    Meet(plan, in, out, [&](const std::vector<const void*>& ins, int) {
      std::memcpy(out, ins[0], static_cast<size_t>(bytes));
    });
  }
  void Fail(const std::string& error) override { clique_->Leave(rank_, error); }

 private:
  static std::string Hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
  }
  template <typename Fn>
  void Meet(const CollectivePlan& plan, const void* in, void* out, Fn&& fn) {
    const std::string what = "%" + plan.name;
    auto m = clique_->Arrive(plan.id, what, plan.GroupOf(rank_), rank_, in, out);
    fn(m->ins, plan.IndexIn(rank_));
    clique_->Depart(m, what, rank_);
  }
  InProcessClique* clique_;
  int rank_;
};

InProcessClique::InProcessClique(int participants)
    : n_(participants),
      runs_(static_cast<size_t>(participants)),
      left_(static_cast<size_t>(participants), 0),
      errors_(static_cast<size_t>(participants)) {
  UIR_CHECK(participants >= 1) << "a clique of " << participants << " participants";
  for (int r = 0; r < participants; ++r) members_.push_back(std::make_unique<Member_>(this, r));
}

InProcessClique::~InProcessClique() = default;

Communicator& InProcessClique::Member(int rank) {
  UIR_CHECK(rank >= 0 && rank < n_) << "participant " << rank << " of " << n_;
  return *members_[static_cast<size_t>(rank)];
}

void InProcessClique::Leave(int rank, const std::string& error) {
  std::lock_guard<std::mutex> lock(mu_);
  left_[static_cast<size_t>(rank)] = error.empty() ? 1 : 2;
  errors_[static_cast<size_t>(rank)] = error;
  cv_.notify_all();
}

void InProcessClique::CheckGone(const Meeting& m, const std::string& what, int rank,
                                bool departing) const {
  if (left_[static_cast<size_t>(rank)] == 2) {
    throw DistributedError("participant " + std::to_string(rank) +
                           " failed: " + errors_[static_cast<size_t>(rank)]);
  }
  for (size_t k = 0; k < m.group.size(); ++k) {
    const int p = m.group[k];
    if (p == rank || left_[static_cast<size_t>(p)] == 0) continue;
    if (departing ? m.departed_at[k] : m.arrived_at[k]) continue;
    if (left_[static_cast<size_t>(p)] == 2) {
      throw DistributedError("participant " + std::to_string(p) +
                             " failed: " + errors_[static_cast<size_t>(p)]);
    }
    throw DistributedError("participant " + std::to_string(p) + " finished before reaching " +
                           what + " (run " + std::to_string(m.run) + "), which participant " +
                           std::to_string(rank) + " waits at");
  }
}

std::shared_ptr<InProcessClique::Meeting> InProcessClique::Arrive(int64_t id,
                                                                  const std::string& what,
                                                                  const std::vector<int>& group,
                                                                  int rank, const void* in,
                                                                  void* /*out*/) {
  std::unique_lock<std::mutex> lock(mu_);
  if (group.empty()) {
    throw ShapeError("participant " + std::to_string(rank) + " is in no replica group of " + what);
  }
  const int64_t run = runs_[static_cast<size_t>(rank)][id]++;
  const auto key = std::make_tuple(id, group[0], run);
  std::shared_ptr<Meeting>& slot = meetings_[key];
  if (!slot) {
    slot = std::make_shared<Meeting>();
    slot->group = group;
    slot->ins.assign(group.size(), nullptr);
    slot->arrived_at.assign(group.size(), false);
    slot->departed_at.assign(group.size(), false);
    slot->run = run;
    slot->key = key;
  }
  std::shared_ptr<Meeting> m = slot;
  const auto k = static_cast<size_t>(std::find(group.begin(), group.end(), rank) - group.begin());
  m->ins[k] = in;
  m->arrived_at[k] = true;
  ++m->arrived;
  cv_.notify_all();
  const int g = static_cast<int>(group.size());
  bool gone = false;
  cv_.wait(lock, [&] {
    if (m->arrived == g) return true;
    try {
      CheckGone(*m, what, rank, false);
    } catch (const DistributedError&) {
      gone = true;
    }
    return gone;
  });
  if (m->arrived != g) {
    // Nobody else will come: this participant's deposit is withdrawn.
    if (meetings_.count(m->key) != 0 && meetings_[m->key] == m) meetings_.erase(m->key);
    CheckGone(*m, what, rank, false);
  }
  return m;
}

void InProcessClique::Depart(const std::shared_ptr<Meeting>& m, const std::string& what, int rank) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto k =
      static_cast<size_t>(std::find(m->group.begin(), m->group.end(), rank) - m->group.begin());
  m->departed_at[k] = true;
  ++m->departed;
  cv_.notify_all();
  const int g = static_cast<int>(m->group.size());
  cv_.wait(lock, [&] {
    if (m->departed == g) return true;
    // A member that left without departing read nothing more of ours.
    for (size_t j = 0; j < m->group.size(); ++j) {
      if (!m->departed_at[j] && left_[static_cast<size_t>(m->group[j])] != 0) return true;
    }
    return false;
  });
  (void)what;
  auto it = meetings_.find(m->key);
  if (it != meetings_.end() && it->second == m) meetings_.erase(it);
}

}  // namespace uir::runtime
