#include "runtime/mpi_communicator.h"

#include "support/error.h"

#if UIR_HAVE_MPI

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace uir::runtime {
namespace {

using Op = CollectivePlan::Op;
constexpr int kFaultTag = 7;
constexpr int kFaultBytes = 1 << 16;

std::string MpiText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

void Check(int code, const std::string& what) {
  if (code != MPI_SUCCESS) throw DistributedError("MPI: " + what + " failed: " + MpiText(code));
}

// The fold of two buffers of one type in MPI's user-op form: inout = in op
// inout (commutative, so the order of the two does not matter).
template <PrimitiveType T, FoldOp F>
void UserFold(void* in, void* inout, int* len, MPI_Datatype*) {
  FoldInto(T, F, inout, in, *len);
}

using UserFn = void (*)(void*, void*, int*, MPI_Datatype*);

template <PrimitiveType T>
UserFn UserFoldOf(FoldOp f) {
  switch (f) {
    case FoldOp::kAdd:
      return &UserFold<T, FoldOp::kAdd>;
    case FoldOp::kMultiply:
      return &UserFold<T, FoldOp::kMultiply>;
    case FoldOp::kMaximum:
      return &UserFold<T, FoldOp::kMaximum>;
    case FoldOp::kMinimum:
      return &UserFold<T, FoldOp::kMinimum>;
    case FoldOp::kAnd:
      return &UserFold<T, FoldOp::kAnd>;
    case FoldOp::kOr:
      return &UserFold<T, FoldOp::kOr>;
  }
  return nullptr;
}

class MpiComm final : public Communicator {
 public:
  MpiComm() {
    Check(MPI_Comm_dup(MPI_COMM_WORLD, &world_), "MPI_Comm_dup");
    Check(MPI_Comm_dup(MPI_COMM_WORLD, &fault_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(fault_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(world_, &rank_);
    MPI_Comm_size(world_, &size_);
    notice_.resize(kFaultBytes);
    Check(MPI_Irecv(notice_.data(), kFaultBytes, MPI_CHAR, MPI_ANY_SOURCE, kFaultTag, fault_,
                    &notice_request_),
          "MPI_Irecv");
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool failed() const {
    std::lock_guard<std::mutex> lock(mu_);
    return !failure_.empty();
  }

  void Prepare(uint64_t program, std::span<const CollectivePlan* const> plans) override {
    // Every run: the same program on every process, or a clear error
    // before any of its collectives could meet another's.
    const uint64_t mine[2] = {program, plans.size()};
    std::vector<uint64_t> all(2 * static_cast<size_t>(size_));
    MPI_Request request;
    Check(MPI_Iallgather(mine, 2, MPI_UINT64_T, all.data(), 2, MPI_UINT64_T, world_, &request),
          "MPI_Iallgather");
    Wait(&request, "the start of the run");
    for (int r = 0; r < size_; ++r) {
      if (all[2 * static_cast<size_t>(r)] != program) {
        throw DistributedError("process " + std::to_string(r) +
                               " runs another program than process " + std::to_string(rank_) +
                               " (fingerprints " + Hex(all[2 * static_cast<size_t>(r)]) + " and " +
                               Hex(program) + ")");
      }
    }
    std::lock_guard<std::mutex> lock(comms_mu_);
    for (const CollectivePlan* p : plans) program_of_[p] = program;
    std::vector<MPI_Comm>& comms = comms_[program];
    if (comms.size() == plans.size()) return;
    // One communicator per collective, split from the world by its group
    // (every process in the same order: the plans' ids).
    comms.clear();
    for (const CollectivePlan* plan : plans) {
      MPI_Comm comm = MPI_COMM_NULL;
      if (plan->op == Op::kReplicaId || plan->op == Op::kPartitionId) {
        comms.push_back(comm);
        continue;
      }
      const std::vector<int>& group = plan->GroupOf(rank_);
      const int color =
          group.empty() ? MPI_UNDEFINED : *std::min_element(group.begin(), group.end());
      Check(MPI_Comm_split(world_, color, plan->IndexIn(rank_), &comm), "MPI_Comm_split");
      if (comm != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
      comms.push_back(comm);
    }
  }

  // The collectives themselves are MPI's blocking calls, the fastest it
  // has (its nonblocking ones took 1.3-1.5x as long from 256 KiB to 1 MiB
  // on 2 ranks); the watchdog (Watch) ends a process whose blocking call
  // waits for a process that failed.
  void AllReduce(const CollectivePlan& plan, const void* in, void* out, int64_t count) override {
    const auto [type, op] = TypeAndOp(plan);
    const int64_t eb = plan.element_bytes();
    MPI_Comm comm = CommOf(plan);
    for (int64_t at = 0; at < count; at += kChunk) {
      const int c = static_cast<int>(std::min<int64_t>(kChunk, count - at));
      Blocking(plan, "MPI_Allreduce", [&] {
        return MPI_Allreduce(static_cast<const uint8_t*>(in) + at * eb,
                             static_cast<uint8_t*>(out) + at * eb, c, type, op, comm);
      });
    }
  }

  void AllGather(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    MPI_Comm comm = CommOf(plan);
    const int b = Bytes(bytes, plan);
    Blocking(plan, "MPI_Allgather",
             [&] { return MPI_Allgather(in, b, MPI_BYTE, out, b, MPI_BYTE, comm); });
  }

  void ReduceScatter(const CollectivePlan& plan, const void* in, void* out,
                     int64_t count) override {
    const auto [type, op] = TypeAndOp(plan);
    MPI_Comm comm = CommOf(plan);
    const int c = Bytes(count, plan);
    Blocking(plan, "MPI_Reduce_scatter_block",
             [&] { return MPI_Reduce_scatter_block(in, out, c, type, op, comm); });
  }

  void AllToAll(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    MPI_Comm comm = CommOf(plan);
    const int b = Bytes(bytes, plan);
    Blocking(plan, "MPI_Alltoall",
             [&] { return MPI_Alltoall(in, b, MPI_BYTE, out, b, MPI_BYTE, comm); });
  }

  void Permute(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    const int to = plan.send_to[static_cast<size_t>(rank_)];
    const int from = plan.receive_from[static_cast<size_t>(rank_)];
    MPI_Comm comm = CommOf(plan);
    const int b = Bytes(bytes, plan);
    Blocking(plan, "MPI_Sendrecv", [&] {
      return MPI_Sendrecv(in, to >= 0 ? b : 0, MPI_BYTE, to >= 0 ? to : MPI_PROC_NULL, 0, out,
                          from >= 0 ? b : 0, MPI_BYTE, from >= 0 ? from : MPI_PROC_NULL, 0, comm,
                          MPI_STATUS_IGNORE);
    });
  }

  void Broadcast(const CollectivePlan& plan, const void* in, void* out, int64_t bytes) override {
    if (plan.IndexIn(rank_) == 0) std::memcpy(out, in, static_cast<size_t>(bytes));
    MPI_Comm comm = CommOf(plan);
    const int b = Bytes(bytes, plan);
    Blocking(plan, "MPI_Bcast", [&] { return MPI_Bcast(out, b, MPI_BYTE, 0, comm); });
  }

  // Looks for failure notices every millisecond; when this process has a
  // failure on record (another's, or its own) while one of its threads has
  // been inside a blocking collective for a second (which then cannot
  // return), says so and ends the process with status 1.
  void Watch() {
    using Clock = std::chrono::steady_clock;
    Clock::time_point stuck_since{};
    while (!stop_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      PollNotice();
      if (blocking_.load() == 0 || !failed()) {
        stuck_since = {};
        continue;
      }
      if (stuck_since == Clock::time_point{}) stuck_since = Clock::now();
      if (Clock::now() - stuck_since < std::chrono::seconds(1)) continue;
      std::string what, failure;
      {
        std::lock_guard<std::mutex> lock(mu_);
        what = blocked_at_;
        failure = failure_;
      }
      std::fprintf(stderr,
                   "uir: process %d: %s (while it waited at %s, which cannot finish now); "
                   "exiting\n",
                   rank_, failure.c_str(), what.c_str());
      std::fflush(stderr);
      std::fflush(stdout);
      std::_Exit(1);
    }
    stopped_.store(true);
  }
  // Stops the watchdog and waits until it touches MPI no more.
  void StopWatching() {
    stop_.store(true);
    while (!stopped_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  void Fail(const std::string& error) override { Report(error); }

  // Sends `message` to every other process once; this process's own waits
  // end from now on.
  void Report(const std::string& message) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (reported_) return;
      reported_ = true;
      if (failure_.empty()) failure_ = "process " + std::to_string(rank_) + " failed: " + message;
    }
    sent_ = message.substr(0, kFaultBytes - 1);
    std::vector<MPI_Request> requests;
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      MPI_Request q;
      if (MPI_Isend(sent_.data(), static_cast<int>(sent_.size()), MPI_CHAR, r, kFaultTag, fault_,
                    &q) == MPI_SUCCESS) {
        requests.push_back(q);
      }
    }
    // Small messages leave at once; a peer that is gone must not hold us.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    for (MPI_Request& q : requests) {
      int done = 0;
      while (!done && std::chrono::steady_clock::now() < until) {
        MPI_Test(&q, &done, MPI_STATUS_IGNORE);
        if (!done) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
  }

  // Withdraws the standing receive for failure notices (before finalizing).
  void StopListening() {
    std::lock_guard<std::mutex> lock(notice_mu_);
    if (notice_request_ == MPI_REQUEST_NULL) return;
    MPI_Cancel(&notice_request_);
    MPI_Wait(&notice_request_, MPI_STATUS_IGNORE);
    notice_request_ = MPI_REQUEST_NULL;
  }

  void Barrier() {
    MPI_Request request;
    Check(MPI_Ibarrier(world_, &request), "MPI_Ibarrier");
    Wait(&request, "a barrier");
  }

 private:
  static constexpr int64_t kChunk = int64_t{1} << 30;

  static std::string Hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
  }

  static int Bytes(int64_t n, const CollectivePlan& plan) {
    if (n > INT_MAX) {
      throw UnimplementedError("%" + plan.name + ": a block of " + std::to_string(n) +
                               " elements per process across processes (MPI counts stop at 2^31)");
    }
    return static_cast<int>(n);
  }

  MPI_Comm CommOf(const CollectivePlan& plan) {
    std::lock_guard<std::mutex> lock(comms_mu_);
    auto it = program_of_.find(&plan);
    if (it == program_of_.end()) {
      throw InternalError("collective %" + plan.name + " was not prepared in this process");
    }
    return comms_.at(it->second).at(static_cast<size_t>(plan.id));
  }

  // The MPI datatype and op for a fold: MPI's own where they mean what HLO
  // means, else a user op on a carrier type of the element's size.
  std::pair<MPI_Datatype, MPI_Op> TypeAndOp(const CollectivePlan& plan) {
    using P = PrimitiveType;
    const FoldOp f = plan.fold;
    const bool logical = f == FoldOp::kAnd || f == FoldOp::kOr;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    switch (plan.type) {
      case P::kPred:
        return {MPI_C_BOOL, f == FoldOp::kAdd || f == FoldOp::kMaximum || f == FoldOp::kOr
                                ? MPI_LOR
                                : MPI_LAND};
      case P::kS8:
        type = MPI_INT8_T;
        break;
      case P::kS16:
        type = MPI_INT16_T;
        break;
      case P::kS32:
        type = MPI_INT32_T;
        break;
      case P::kS64:
        type = MPI_INT64_T;
        break;
      case P::kU8:
        type = MPI_UINT8_T;
        break;
      case P::kU16:
        type = MPI_UINT16_T;
        break;
      case P::kU32:
        type = MPI_UINT32_T;
        break;
      case P::kU64:
        type = MPI_UINT64_T;
        break;
      default:
        break;
    }
    if (type != MPI_DATATYPE_NULL &&
        (f == FoldOp::kAdd || f == FoldOp::kMaximum || f == FoldOp::kMinimum || logical)) {
      // Signed sums wrap on every MPI we know; products go through the user
      // op (which wraps by definition).
      const MPI_Op op = f == FoldOp::kAdd       ? MPI_SUM
                        : f == FoldOp::kMaximum ? MPI_MAX
                        : f == FoldOp::kMinimum ? MPI_MIN
                        : f == FoldOp::kAnd     ? MPI_BAND
                                                : MPI_BOR;
      return {type, op};
    }
    if ((plan.type == P::kF32 || plan.type == P::kF64) &&
        (f == FoldOp::kAdd || f == FoldOp::kMultiply)) {
      return {plan.type == P::kF32 ? MPI_FLOAT : MPI_DOUBLE,
              f == FoldOp::kAdd ? MPI_SUM : MPI_PROD};
    }
    if ((plan.type == P::kC64 || plan.type == P::kC128) &&
        (f == FoldOp::kAdd || f == FoldOp::kMultiply)) {
      return {plan.type == P::kC64 ? MPI_C_FLOAT_COMPLEX : MPI_C_DOUBLE_COMPLEX,
              f == FoldOp::kAdd ? MPI_SUM : MPI_PROD};
    }
    return {CarrierOf(plan), UserOp(plan)};
  }

  static MPI_Datatype CarrierOf(const CollectivePlan& plan) {
    switch (plan.element_bytes()) {
      case 1:
        return MPI_UINT8_T;
      case 2:
        return MPI_UINT16_T;
      case 4:
        return MPI_UINT32_T;
      case 8:
        return MPI_UINT64_T;
      default:
        throw UnimplementedError("%" + plan.name + ": " +
                                 std::string(PrimitiveTypeName(plan.type)) + " across processes");
    }
  }

  MPI_Op UserOp(const CollectivePlan& plan) {
    std::lock_guard<std::mutex> lock(ops_mu_);
    const auto key = std::make_pair(plan.type, plan.fold);
    auto it = ops_.find(key);
    if (it != ops_.end()) return it->second;
    using P = PrimitiveType;
    UserFn fn = nullptr;
    switch (plan.type) {
      case P::kF16:
        fn = UserFoldOf<P::kF16>(plan.fold);
        break;
      case P::kBF16:
        fn = UserFoldOf<P::kBF16>(plan.fold);
        break;
      case P::kF32:
        fn = UserFoldOf<P::kF32>(plan.fold);
        break;
      case P::kF64:
        fn = UserFoldOf<P::kF64>(plan.fold);
        break;
      case P::kS8:
        fn = UserFoldOf<P::kS8>(plan.fold);
        break;
      case P::kS16:
        fn = UserFoldOf<P::kS16>(plan.fold);
        break;
      case P::kS32:
        fn = UserFoldOf<P::kS32>(plan.fold);
        break;
      case P::kS64:
        fn = UserFoldOf<P::kS64>(plan.fold);
        break;
      case P::kU8:
        fn = UserFoldOf<P::kU8>(plan.fold);
        break;
      case P::kU16:
        fn = UserFoldOf<P::kU16>(plan.fold);
        break;
      case P::kU32:
        fn = UserFoldOf<P::kU32>(plan.fold);
        break;
      case P::kU64:
        fn = UserFoldOf<P::kU64>(plan.fold);
        break;
      default:
        throw UnimplementedError("%" + plan.name + ": " + std::string(FoldOpName(plan.fold)) +
                                 " of " + std::string(PrimitiveTypeName(plan.type)) +
                                 " across processes");
    }
    MPI_Op op;
    Check(MPI_Op_create(fn, /*commute=*/1, &op), "MPI_Op_create");
    ops_[key] = op;
    return op;
  }

  // Runs a blocking MPI call of collective `plan` (`call` returns its
  // code), known to the watchdog while it runs. Throws when a failure is
  // already on record: the call could not finish.
  template <typename Call>
  void Blocking(const CollectivePlan& plan, const char* name, Call&& call) {
    PollNotice();
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!failure_.empty()) {
        throw DistributedError(failure_ + " (before process " + std::to_string(rank_) +
                               " reached %" + plan.name + ")");
      }
      blocked_at_ = "%" + plan.name;
    }
    blocking_.fetch_add(1);
    const int code = call();
    blocking_.fetch_sub(1);
    Check(code, name);
  }

  // Waits for `request`, polling for a failure notice from another process
  // (and this process's own failure) between tests.
  void Wait(MPI_Request* request, const std::string& what) {
    int spins = 0;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      int done = 0;
      Check(MPI_Test(request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done) return;
      PollNotice();
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!failure_.empty()) {
          throw DistributedError(failure_ + " (while process " + std::to_string(rank_) +
                                 " waited at " + what + ")");
        }
      }
      // Spin first (MPI progresses inside MPI_Test), then give the core
      // away: ranks may outnumber cores.
      if (++spins > 2000) {
        if (std::chrono::steady_clock::now() - start > std::chrono::milliseconds(20)) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        } else {
          sched_yield();
        }
      }
    }
  }

  void PollNotice() {
    std::unique_lock<std::mutex> lock(notice_mu_, std::try_to_lock);
    if (!lock.owns_lock() || notice_request_ == MPI_REQUEST_NULL) return;
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&notice_request_, &done, &status) != MPI_SUCCESS || !done) return;
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    notice_request_ = MPI_REQUEST_NULL;
    std::lock_guard<std::mutex> failure_lock(mu_);
    if (failure_.empty()) {
      failure_ = "process " + std::to_string(status.MPI_SOURCE) +
                 " failed: " + std::string(notice_.data(), static_cast<size_t>(length));
    }
  }

  MPI_Comm world_ = MPI_COMM_NULL, fault_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  mutable std::mutex mu_;  // failure_, reported_
  std::string failure_;
  bool reported_ = false;
  std::string sent_;
  std::mutex notice_mu_;
  std::vector<char> notice_;
  MPI_Request notice_request_ = MPI_REQUEST_NULL;
  std::mutex comms_mu_;
  std::map<uint64_t, std::vector<MPI_Comm>> comms_;  // per program, per plan id
  std::map<const CollectivePlan*, uint64_t> program_of_;
  std::mutex ops_mu_;
  std::map<std::pair<PrimitiveType, FoldOp>, MPI_Op> ops_;
  std::atomic<int> blocking_{0};  // threads inside a blocking collective
  std::string blocked_at_;        // the last one entered (mu_)
  std::atomic<bool> stop_{false}, stopped_{false};
};

std::mutex g_mu;
MpiComm* g_world = nullptr;  // lives until exit: MPI objects outlive Python's teardown
bool g_finalized = false;

}  // namespace

bool MpiBuilt() { return true; }

std::string MpiLibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<size_t>(length));
  return s.substr(0, s.find('\n'));
}

MpiWorldInfo MpiInitialize() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_finalized) throw DistributedError("MPI was finalized in this process; it starts once");
  if (g_world == nullptr) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = 0;
    if (!initialized) {
      Check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    } else {
      MPI_Query_thread(&provided);
    }
    if (provided < MPI_THREAD_MULTIPLE) {
      throw DistributedError(
          "the MPI library gives thread level " + std::to_string(provided) +
          ", and uir's collectives run from several threads (MPI_THREAD_MULTIPLE)");
    }
    g_world = new MpiComm();
    std::thread([] { g_world->Watch(); }).detach();
  }
  return {g_world->rank(), g_world->size()};
}

bool MpiInitialized() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_world != nullptr && !g_finalized;
}

void MpiFinalize() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_world == nullptr || g_finalized) return;
  if (!g_world->failed()) {
    g_world->Barrier();
    g_world->StopWatching();
    g_world->StopListening();
    MPI_Finalize();
  }
  g_finalized = true;
}

void MpiBarrier() { static_cast<MpiComm&>(MpiWorld()).Barrier(); }

Communicator& MpiWorld() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_world == nullptr || g_finalized) {
    throw DistributedError("MPI is not initialized in this process (uir.distributed.initialize())");
  }
  return *g_world;
}

void MpiReportFailure(const std::string& message) {
  MpiComm* world = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_world == nullptr || g_finalized) return;
    world = g_world;
  }
  world->Report(message);
}

double MpiAllreduceSeconds(const float* in, float* out, int64_t count, int iterations) {
  MpiInitialize();
  MPI_Barrier(MPI_COMM_WORLD);
  const void* from = in == out ? MPI_IN_PLACE : static_cast<const void*>(in);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    MPI_Allreduce(from, out, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  const auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start).count() / std::max(1, iterations);
}

}  // namespace uir::runtime

#else  // !UIR_HAVE_MPI

namespace uir::runtime {
namespace {

[[noreturn]] void NoMpi() {
  throw DistributedError(
      "this uir was built without MPI: install Open MPI (Debian: libopenmpi-dev openmpi-bin) "
      "and rebuild");
}

}  // namespace

bool MpiBuilt() { return false; }
std::string MpiLibraryVersion() { return ""; }
MpiWorldInfo MpiInitialize() { NoMpi(); }
bool MpiInitialized() { return false; }
void MpiFinalize() {}
void MpiBarrier() { NoMpi(); }
Communicator& MpiWorld() { NoMpi(); }
void MpiReportFailure(const std::string&) {}
double MpiAllreduceSeconds(const float*, float*, int64_t, int) { NoMpi(); }

}  // namespace uir::runtime

#endif  // UIR_HAVE_MPI
