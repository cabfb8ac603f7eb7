#include "runtime/collective_thunk.h"

#include <cstring>

#include "support/error.h"

namespace uir::runtime {
namespace {

using Op = CollectivePlan::Op;

// Copies `blocks` runs of `run` bytes, `from_stride` apart, into runs
// `to_stride` apart.
void Strided(const uint8_t* from, int64_t from_stride, uint8_t* to, int64_t to_stride,
             int64_t blocks, int64_t run) {
  for (int64_t b = 0; b < blocks; ++b) {
    std::memcpy(to + b * to_stride, from + b * from_stride, static_cast<size_t>(run));
  }
}

}  // namespace

std::unique_ptr<CollectiveThunk> CollectiveThunk::Create(std::string name,
                                                         std::vector<Part> parts) {
  std::vector<BufferUse> uses;
  for (const Part& p : parts) {
    if (p.plan.op != Op::kReplicaId && p.plan.op != Op::kPartitionId) {
      uses.push_back(BufferUse::Read(p.in));
    }
    uses.push_back(BufferUse::Write(p.out));
  }
  return std::unique_ptr<CollectiveThunk>(
      new CollectiveThunk(std::move(name), std::move(parts), std::move(uses)));
}

bool CollectiveThunk::MeetsOthers() const {
  for (const Part& p : parts_) {
    if (p.plan.op != Op::kReplicaId && p.plan.op != Op::kPartitionId) return true;
  }
  return false;
}

std::string CollectiveThunk::Details() const {
  std::string s;
  for (const Part& p : parts_) s += (s.empty() ? "" : "; ") + p.plan.ToString();
  return s;
}

void CollectiveThunk::Execute(const ExecuteParams& params) const {
  Communicator* comm = params.communicator;
  for (const Part& part : parts_) {
    const int n = part.plan.participants;
    if (comm == nullptr || comm->size() != n) {
      throw DistributedError(
          "%" + part.plan.name + " (" + std::string(CollectivePlan::OpName(part.plan.op)) +
          ") is a collective of " + std::to_string(n) + " participants, and this run has " +
          (comm == nullptr ? std::string("none") : std::to_string(comm->size())));
    }
    Run(part, *comm, params);
  }
}

void CollectiveThunk::Run(const Part& part, Communicator& comm, const ExecuteParams& params) const {
  const CollectivePlan& plan = part.plan;
  const int rank = comm.rank();
  auto* out = params.At(part.out);
  if (plan.op == Op::kReplicaId || plan.op == Op::kPartitionId) {
    const auto id = static_cast<uint32_t>(plan.op == Op::kReplicaId ? rank / plan.partitions
                                                                    : rank % plan.partitions);
    std::memcpy(out, &id, sizeof id);
    return;
  }
  const uint8_t* in = params.At(part.in);
  const int64_t eb = plan.element_bytes();
  const int64_t bytes = plan.Elements() * eb;
  // Every participant reads the others' operands while writing its result:
  // an operand that shares memory with the result is read from a copy.
  std::vector<uint8_t> staged;
  if (part.in.Overlaps(part.out)) {
    staged.assign(in, in + bytes);
    in = staged.data();
  }
  const auto g = static_cast<int64_t>(plan.GroupOf(rank).size());
  switch (plan.op) {
    case Op::kAllReduce:
      comm.AllReduce(plan, in, out, plan.Elements());
      return;
    case Op::kBroadcast:
      comm.Broadcast(plan, in, out, bytes);
      return;
    case Op::kPermute:
      if (plan.receive_from[static_cast<size_t>(rank)] < 0) {
        std::memset(out, 0, static_cast<size_t>(bytes));
      }
      comm.Permute(plan, in, out, bytes);
      return;
    case Op::kAllGather: {
      if (plan.outer == 1) {
        comm.AllGather(plan, in, out, bytes);
        return;
      }
      // Member k's [outer, dim, inner] into the k-th dim block of each outer row.
      std::vector<uint8_t> all(static_cast<size_t>(g * bytes));
      comm.AllGather(plan, in, all.data(), bytes);
      const int64_t run = plan.dim * plan.inner * eb;
      for (int64_t k = 0; k < g; ++k) {
        Strided(all.data() + k * bytes, run, out + k * run, g * run, plan.outer, run);
      }
      return;
    }
    case Op::kReduceScatter:
    case Op::kAllToAll: {
      const int64_t chunk = plan.dim / g;           // of `dim`, per member
      const int64_t run = chunk * plan.inner * eb;  // one outer row of a block
      const int64_t block = plan.outer * run;       // one member's block
      const int64_t count = plan.outer * chunk * plan.inner;
      const uint8_t* blocks = in;
      std::vector<uint8_t> packed;
      if (plan.outer != 1) {
        packed.resize(static_cast<size_t>(bytes));
        for (int64_t k = 0; k < g; ++k) {
          Strided(in + k * run, g * run, packed.data() + k * block, run, plan.outer, run);
        }
        blocks = packed.data();
      }
      if (plan.op == Op::kReduceScatter) {
        comm.ReduceScatter(plan, blocks, out, count);
        return;
      }
      if (plan.outer == 1) {
        comm.AllToAll(plan, blocks, out, block);
        return;
      }
      std::vector<uint8_t> received(static_cast<size_t>(bytes));
      comm.AllToAll(plan, blocks, received.data(), block);
      for (int64_t k = 0; k < g; ++k) {
        Strided(received.data() + k * block, run, out + k * run, g * run, plan.outer, run);
      }
      return;
    }
    default:
      break;
  }
  throw InternalError("collective thunk " + name() + " of kind " +
                      std::string(CollectivePlan::OpName(plan.op)));
}

}  // namespace uir::runtime
