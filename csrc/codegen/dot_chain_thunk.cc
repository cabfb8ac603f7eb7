#include "codegen/dot_chain_thunk.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "codegen/library_plans.h"
#include "igraph/interpreter.h"
#include "support/error.h"
#include "support/thread_pool.h"

namespace uir::codegen {
namespace {

using igraph::DramTensor;

uint8_t* At(uint8_t* const* allocations, const DramTensor& t) {
  return allocations[t.allocation] + t.offset;
}

// Blocks [begin, end) of a dot chain, numbered batch-major.
void RunBlocks(const igraph::KernelNode& n, const ChainGemms& g, uint8_t* const* allocations,
               const igraph::KernelCode* code, int64_t per_batch, int64_t begin, int64_t end) {
  const igraph::DotChainPlan& c = *n.chain;
  const auto block_bytes = static_cast<size_t>(c.BlockBytes());
  // Both blocks in one buffer per run of blocks: not a per-thread one,
  // since a thread waiting in an epilogue kernel's ParallelFor may run
  // another thunk (another chain) meanwhile.
  const auto blocks = std::make_unique_for_overwrite<uint8_t[]>(2 * block_bytes + 64);
  uint8_t* first = blocks.get() + (64 - reinterpret_cast<uintptr_t>(blocks.get()) % 64) % 64;
  uint8_t* second = first + block_bytes;
  igraph::DramBuffers dram;
  int64_t id = 0;
  dram[id++] = std::span<uint8_t>(first, block_bytes);
  for (int64_t s : c.scalars) {
    const DramTensor& t = n.inputs.at(static_cast<size_t>(s));
    dram[id++] = std::span<uint8_t>(At(allocations, t), static_cast<size_t>(t.bytes));
  }
  std::vector<std::vector<uint8_t>> scratch;
  for (int64_t bytes : n.scratch_bytes) {
    scratch.emplace_back(static_cast<size_t>(std::max<int64_t>(bytes, 1)), 0);
    dram[id++] = std::span<uint8_t>(scratch.back());
  }
  std::vector<std::vector<uint8_t>> constants;
  for (const hlo::Literal& k : n.constants) {
    constants.emplace_back(k.bytes().begin(), k.bytes().end());
    dram[id++] = std::span<uint8_t>(constants.back());
  }
  dram[id++] = std::span<uint8_t>(second, block_bytes);
  const uint8_t* a = At(allocations, n.inputs.at(static_cast<size_t>(c.a)));
  const uint8_t* b = At(allocations, n.inputs.at(static_cast<size_t>(c.b)));
  const uint8_t* cc = At(allocations, n.inputs.at(static_cast<size_t>(c.c)));
  uint8_t* out = At(allocations, n.outputs.at(0));
  const int64_t e = c.element_bytes;
  runtime::GemmPlan g1 = g.first, g2 = g.second;
  for (int64_t task = begin; task < end; ++task) {
    const int64_t batch = task / per_batch;
    const int64_t r0 = task % per_batch * c.block_rows;
    const int64_t rows = std::min(c.block_rows, c.rows - r0);
    g1.m = g2.m = rows;
    runtime::RunGemm(g1, a + (batch * g.a_batch + r0 * g.a_row) * e, b + batch * g.b_batch * e,
                     first);
    const size_t from = rows == c.block_rows ? 0 : c.full_parts;
    const size_t to = rows == c.block_rows ? c.full_parts : n.igraphs.size();
    for (size_t k = from; k < to; ++k) {
      if (code == nullptr || !code->Run(n.igraphs[k], dram)) igraph::Interpret(n.igraphs[k], dram);
    }
    runtime::RunGemm(g2, second, cc + batch * g.c_batch * e,
                     out + (batch * g.out_batch + r0 * g.out_row) * e);
  }
}

}  // namespace

std::optional<ChainGemms> PlanChainGemms(const igraph::KernelNode& n) {
  if (n.chain == nullptr || n.outputs.size() != 1) return std::nullopt;
  const igraph::DotChainPlan& c = *n.chain;
  const DramTensor& a = n.inputs.at(static_cast<size_t>(c.a));
  const DramTensor& b = n.inputs.at(static_cast<size_t>(c.b));
  const DramTensor& cc = n.inputs.at(static_cast<size_t>(c.c));
  DramTensor mid;
  mid.shape = c.first->shape();
  DramTensor mid_lhs;
  mid_lhs.shape = c.second->operand(0)->shape();
  ChainGemms g;
  if (!PlanGemm(*c.first, a, b, mid, &g.first) ||
      !PlanGemm(*c.second, mid_lhs, cc, n.outputs[0], &g.second)) {
    return std::nullopt;
  }
  UIR_CHECK(g.first.batch == c.batch && g.first.m == c.rows && g.first.n == c.n &&
            !g.second.trans_a)
      << "dot chain " << n.name << " planned unlike its lowering";
  g.a_batch = g.first.a_batch_stride;
  g.b_batch = g.first.b_batch_stride;
  g.c_batch = g.second.b_batch_stride;
  g.out_batch = g.second.c_batch_stride;
  g.a_row = g.first.trans_a ? 1 : g.first.k;
  g.out_row = g.second.n;
  // One block of one batch; the stored leading dimensions of whole matrices.
  g.first.lda = g.first.trans_a ? c.rows : g.first.k;
  g.first.ldb = g.first.trans_b ? g.first.k : g.first.n;
  g.first.ldc = c.n;
  g.second.lda = c.n;
  g.second.ldb = g.second.trans_b ? g.second.k : g.second.n;
  g.second.ldc = g.second.n;
  g.first.batch = g.second.batch = 1;
  return g;
}

void RunDotChain(const igraph::KernelNode& n, const ChainGemms& gemms, uint8_t* const* allocations,
                 const igraph::KernelCode* code) {
  const igraph::DotChainPlan& c = *n.chain;
  const int64_t per_batch = (c.rows + c.block_rows - 1) / c.block_rows;
  const int64_t tasks = c.batch * per_batch;
  auto run = [&](int64_t begin, int64_t end) {
    RunBlocks(n, gemms, allocations, code, per_batch, begin, end);
  };
  if (code == nullptr || tasks == 1 || NumThreads() == 1) {
    run(0, tasks);
    return;
  }
  runtime::SingleThreadedGemm scope;
  ParallelFor(tasks, 1, run);
}

}  // namespace uir::codegen
