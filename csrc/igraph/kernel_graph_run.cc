// Running a Kernel Graph over memory laid out as buffer assignment says:
// iGraphs on the interpreter or as machine code, the rest on the evaluator
// (the reference the thunks of codegen are checked against, and the host
// thunk's way to run a node no other thunk runs yet).
#include <cstdlib>
#include <cstring>
#include <functional>
#include <utility>

#include "eval/collectives.h"
#include "eval/evaluator.h"
#include "eval/reduce.h"
#include "eval/scatter.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/builder.h"
#include "hlo/float_format.h"
#include "igraph/interpreter.h"
#include "igraph/kernel_graph.h"
#include "igraph/tile_program.h"
#include "runtime/custom_call.h"
#include "runtime/gemm.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace uir::igraph {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

// Logical (row-major literal) index i of `shape` -> physical element index.
std::vector<int64_t> PhysicalOrder(const hlo::Shape& shape) {
  const int64_t rank = shape.rank();
  const std::vector<int64_t> strides = PhysicalStrides(shape);
  std::vector<int64_t> out(static_cast<size_t>(shape.element_count()));
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t p = 0;
    for (int64_t d = 0; d < rank; ++d) p += idx[d] * strides[d];
    out[i] = p;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shape.dimensions(d)) break;
      idx[d] = 0;
    }
  }
  return out;
}

// One allocation: zeroed (calloc maps large blocks lazily, so untouched
// pages cost nothing) and 64-byte aligned for vector loads.
struct Block {
  explicit Block(int64_t bytes)
      : raw(static_cast<uint8_t*>(std::calloc(static_cast<size_t>(bytes) + 64, 1))) {
    if (raw == nullptr) throw std::bad_alloc();
    data = raw + (64 - reinterpret_cast<uintptr_t>(raw) % 64) % 64;
  }
  Block(Block&& o) noexcept : raw(std::exchange(o.raw, nullptr)), data(o.data) {}
  Block(const Block&) = delete;
  ~Block() { std::free(raw); }
  uint8_t* raw;
  uint8_t* data;
};

}  // namespace

bool PlanGemm(const HloInstruction& dot, const DramTensor& lhs, const DramTensor& rhs,
              const DramTensor& out, runtime::GemmPlan* plan) {
  const hlo::PrimitiveType t = out.shape.element_type();
  if (t != hlo::PrimitiveType::kF32 && t != hlo::PrimitiveType::kF64) return false;
  if (lhs.shape.element_type() != t || rhs.shape.element_type() != t) return false;
  if (!IsRowMajor(lhs.shape) || !IsRowMajor(rhs.shape) || !IsRowMajor(out.shape)) return false;
  const auto& a = dot.attributes();
  auto list = [&](hlo::AttrKey key) {
    return a.GetOr<std::vector<int64_t>>(key).value_or(std::vector<int64_t>{});
  };
  const std::vector<int64_t> lb = list(hlo::AttrKey::kLhsBatchDims);
  const std::vector<int64_t> rb = list(hlo::AttrKey::kRhsBatchDims);
  const std::vector<int64_t> lc = list(hlo::AttrKey::kLhsContractingDims);
  const std::vector<int64_t> rc = list(hlo::AttrKey::kRhsContractingDims);
  const int64_t nb = static_cast<int64_t>(lb.size());
  if (lc.size() != 1 || rc.size() != 1 || rb.size() != lb.size()) return false;
  for (int64_t i = 0; i < nb; ++i) {
    if (lb[i] != i || rb[i] != i) return false;
  }
  const hlo::Shape& L = lhs.shape;
  const hlo::Shape& R = rhs.shape;
  const int64_t lfree = L.rank() - nb - 1, rfree = R.rank() - nb - 1;
  if (lfree < 0 || lfree > 1 || rfree < 0 || rfree > 1) return false;
  if (lc[0] < nb || rc[0] < nb) return false;
  plan->f64 = t == hlo::PrimitiveType::kF64;
  plan->batch = 1;
  for (int64_t i = 0; i < nb; ++i) plan->batch *= L.dimensions(i);
  plan->k = L.dimensions(lc[0]);
  plan->m = lfree ? L.dimensions(lc[0] == nb ? nb + 1 : nb) : 1;
  plan->n = rfree ? R.dimensions(rc[0] == nb ? nb + 1 : nb) : 1;
  plan->trans_a = lfree && lc[0] == nb;
  plan->trans_b = rfree && rc[0] == nb + 1;
  plan->a_batch_stride = plan->m * plan->k;
  plan->b_batch_stride = plan->k * plan->n;
  plan->c_batch_stride = plan->m * plan->n;
  return out.shape.element_count() == plan->batch * plan->m * plan->n;
}

namespace {

bool SamePlaces(const std::vector<DramTensor>& a, const std::vector<DramTensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].allocation != b[i].allocation || a[i].offset != b[i].offset) return false;
  }
  return true;
}

const KernelGraph* SubgraphFor(const KernelNode& n, const hlo::HloComputation* c) {
  for (const KernelGraph& sub : n.subgraphs) {
    if (c != nullptr && sub.name() == c->name()) return &sub;
  }
  return nullptr;
}

// Whether `callee` can run in place: buffer assignment put its parameters
// and root where the caller's operands and result are.
bool CallsInPlace(const buffers::BufferAssignment& ba, const hlo::HloComputation& callee,
                  const std::vector<const HloInstruction*>& args, const HloInstruction& result) {
  if (callee.num_parameters() != static_cast<int64_t>(args.size())) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!SamePlaces(ValueLeaves(ba, callee.parameter(static_cast<int64_t>(i))),
                    ValueLeaves(ba, args[i]))) {
      return false;
    }
  }
  return SamePlaces(ValueLeaves(ba, callee.root()), ValueLeaves(ba, &result));
}

class Runner {
 public:
  Runner(const hlo::HloModule& m, const buffers::BufferAssignment& ba, uint8_t* const* bases,
         const KernelCode* code)
      : ba_(ba), bases_(bases), code_(code), partitions_(m.config().num_partitions) {}

  uint8_t* At(const DramTensor& t) { return bases_[t.allocation] + t.offset; }

  void Write(const DramTensor& t, const hlo::Literal& value) {
    const int64_t size = hlo::StorageBytes(t.shape.element_type());
    UIR_CHECK(static_cast<int64_t>(value.bytes().size()) >= value.element_count() * size);
    if (IsRowMajor(t.shape)) {
      std::memcpy(At(t), value.bytes().data(), static_cast<size_t>(value.element_count() * size));
      return;
    }
    const std::vector<int64_t> order = PhysicalOrder(t.shape);
    for (size_t i = 0; i < order.size(); ++i) {
      std::memcpy(At(t) + order[i] * size, value.bytes().data() + i * size,
                  static_cast<size_t>(size));
    }
  }
  hlo::Literal Read(const DramTensor& t) {
    hlo::Shape plain(t.shape.element_type(), t.shape.dimensions());
    hlo::Literal out(plain);
    const int64_t size = hlo::StorageBytes(t.shape.element_type());
    if (IsRowMajor(t.shape)) {
      std::memcpy(out.mutable_bytes().data(), At(t),
                  static_cast<size_t>(out.element_count() * size));
      return out;
    }
    const std::vector<int64_t> order = PhysicalOrder(t.shape);
    for (size_t i = 0; i < order.size(); ++i) {
      std::memcpy(out.mutable_bytes().data() + i * size, At(t) + order[i] * size,
                  static_cast<size_t>(size));
    }
    return out;
  }
  // A value of `shape` from its array leaves, consumed from `leaves` at `next`.
  hlo::Literal Assemble(const hlo::Shape& shape, const std::vector<DramTensor>& leaves,
                        size_t& next) {
    if (shape.IsArray()) return Read(leaves.at(next++));
    std::vector<hlo::Literal> parts;
    if (shape.IsTuple()) {
      for (const hlo::Shape& s : shape.tuple_shapes()) parts.push_back(Assemble(s, leaves, next));
    }
    return shape.IsTuple() ? eval::TupleOf(std::move(parts)) : hlo::Literal(shape);
  }
  void Scatter(const hlo::Literal& value, const std::vector<DramTensor>& leaves, size_t& next) {
    if (value.shape().IsArray()) {
      Write(leaves.at(next++), value);
      return;
    }
    for (const hlo::Literal& e : value.tuple_elements()) Scatter(e, leaves, next);
  }

  void Run(const KernelGraph& g) {
    for (const KernelNode& n : g.nodes()) RunNode(n);
  }

  void RunNode(const KernelNode& n) {
    if (n.chain != nullptr) {
      RunChain(n);
    } else if (!n.igraphs.empty()) {
      RunKernel(n);
    } else if (n.kind == NodeKind::kControlFlow && RunControlFlow(n)) {
      return;
    } else if (n.kind == NodeKind::kCustomCall && RunCustomCall(n)) {
      return;
    } else if (n.kind == NodeKind::kLibrary && n.igraphs.empty() &&
               n.instruction->opcode() == HloOpcode::kGather) {
      eval::GatherBuffers(*n.instruction, At(n.inputs.at(0)), At(n.inputs.at(1)),
                          At(n.outputs.at(0)));
    } else if (n.kind == NodeKind::kLibrary && n.igraphs.empty() &&
               n.instruction->opcode() == HloOpcode::kReduceWindow) {
      eval::ReduceWindowBuffers(*n.instruction, At(n.inputs.at(0)), At(n.inputs.at(1)),
                                At(n.outputs.at(0)));
    } else if (n.kind == NodeKind::kLibrary && n.igraphs.empty() &&
               n.instruction->opcode() == HloOpcode::kScatter) {
      eval::ScatterBuffers(*n.instruction, At(n.inputs.at(0)), At(n.inputs.at(1)),
                           At(n.inputs.at(2)), At(n.outputs.at(0)));
    } else if (n.kind == NodeKind::kCopy && n.igraphs.empty()) {
      std::vector<const uint8_t*> in;
      for (const DramTensor& t : n.inputs) in.push_back(At(t));
      RunDynamicCopy(*n.instruction, in, At(n.outputs.at(0)));
    } else {
      RunOnEvaluator(n);
    }
  }

 private:
  // A loop condition's or a branch selector's value, read where it lives.
  int64_t ReadScalar(const HloInstruction* root) {
    const analysis::HloValue& v = ba_.alias().dataflow().ValueAt(root, {});
    const buffers::Slice& slice = ba_.SliceOf(v);
    const uint8_t* at = bases_[slice.allocation] + slice.offset;
    switch (root->shape().element_type()) {
      case hlo::PrimitiveType::kPred:
      case hlo::PrimitiveType::kU8:
        return *at;
      case hlo::PrimitiveType::kS8:
        return *reinterpret_cast<const int8_t*>(at);
      case hlo::PrimitiveType::kS16:
        return Load<int16_t>(at);
      case hlo::PrimitiveType::kU16:
        return Load<uint16_t>(at);
      case hlo::PrimitiveType::kS32:
        return Load<int32_t>(at);
      case hlo::PrimitiveType::kU32:
        return Load<uint32_t>(at);
      case hlo::PrimitiveType::kS64:
      case hlo::PrimitiveType::kU64:
        return Load<int64_t>(at);
      default: {
        const std::vector<DramTensor> leaves = ValueLeaves(ba_, root);
        UIR_CHECK(leaves.size() == 1);
        return Read(leaves[0]).GetInt64(0);
      }
    }
  }
  template <typename T>
  static int64_t Load(const uint8_t* at) {
    T v;
    std::memcpy(&v, at, sizeof(T));
    return static_cast<int64_t>(v);
  }

  // while, conditional and call as runs of their computations' sub-graphs
  // on the same memory: the condition's result picks whether the body runs
  // again, the selector picks a branch. Buffer assignment places a loop's
  // state, its body's parameter and root and the condition's parameter in
  // one buffer, and likewise for branches and callees; where it did not,
  // the node runs on the evaluator instead (returns false).
  bool RunControlFlow(const KernelNode& n) {
    const HloInstruction& inst = *n.instruction;
    if (inst.opcode() == HloOpcode::kWhile) {
      const std::optional<WhileLoop> loop = InPlaceWhile(n, ba_);
      if (!loop) return false;
      const hlo::HloComputation* cond =
          *inst.attributes().GetOr<hlo::HloComputation*>(hlo::AttrKey::kCondition);
      while (true) {
        Run(*loop->condition);
        if (ReadScalar(cond->root()) == 0) return true;
        Run(*loop->body);
      }
    }
    if (inst.opcode() == HloOpcode::kConditional) {
      const std::optional<Branches> branches = InPlaceBranches(n, ba_);
      if (!branches) return false;
      const HloInstruction* selector = inst.operand(0);
      int64_t index = ReadScalar(selector);
      const auto count = static_cast<int64_t>(branches->graphs.size());
      if (selector->shape().element_type() == hlo::PrimitiveType::kPred) {
        index = index != 0 ? 0 : 1;
      } else if (index < 0 || index >= count) {
        index = count - 1;  // as XLA does
      }
      Run(*branches->graphs[static_cast<size_t>(index)]);
      return true;
    }
    if (const KernelGraph* callee = InPlaceCall(n, ba_)) {
      Run(*callee);
      return true;
    }
    return false;
  }
  // A custom call straight on its buffers, through the registry (false:
  // the evaluator runs it; see CustomCallFrameOf).
  bool RunCustomCall(const KernelNode& n) {
    std::optional<runtime::CallFrame> frame = CustomCallFrameOf(n);
    if (!frame) return false;
    size_t next = 0;
    std::vector<const DramTensor*> leaves;
    for (const DramTensor& t : n.inputs) leaves.push_back(&t);
    for (const DramTensor& t : n.outputs) leaves.push_back(&t);
    ForEachCallLeaf(*frame, [&](runtime::CallBuffer& leaf) { leaf.data = At(*leaves[next++]); });
    runtime::RunCustomCall(*frame);
    return true;
  }

  void RunKernel(const KernelNode& n) {
    std::vector<std::vector<uint8_t>> constants;
    DramBuffers dram;
    int64_t id = 0;
    for (const DramTensor& t : n.inputs) {
      dram[id++] = std::span<uint8_t>(At(t), static_cast<size_t>(t.bytes));
    }
    if (n.windows != nullptr) {
      const InputMemory at = [&](int64_t input) -> const uint8_t* {
        return At(n.inputs.at(static_cast<size_t>(input)));
      };
      for (const DynamicWindow& w : n.windows->windows) {
        const DramTensor& t = n.inputs.at(static_cast<size_t>(w.input));
        dram[w.input] = std::span<uint8_t>(At(t) + WindowOffset(*n.windows, w, at),
                                           static_cast<size_t>(t.bytes));
      }
    }
    std::vector<std::vector<uint8_t>> scratch;
    for (size_t k = 0; k < n.scratch_bytes.size(); ++k) {
      if (k == 0 && n.library != nullptr) {
        // The library writes its result where the epilogue finishes it.
        RunLibrary(n);
        const DramTensor& out = n.outputs.at(0);
        dram[id++] = std::span<uint8_t>(At(out), static_cast<size_t>(out.bytes));
        continue;
      }
      scratch.emplace_back(static_cast<size_t>(std::max<int64_t>(n.scratch_bytes[k], 1)), 0);
      dram[id++] = std::span<uint8_t>(scratch.back());
    }
    for (const hlo::Literal& c : n.constants) {
      constants.emplace_back(c.bytes().begin(), c.bytes().end());
      dram[id++] = std::span<uint8_t>(constants.back());
    }
    const int64_t first_output = id;
    for (const DramTensor& t : n.outputs) {
      dram[id++] = std::span<uint8_t>(At(t), static_cast<size_t>(t.bytes));
    }
    // A root dynamic-update-slice: the iGraphs compute the update, written
    // into the output (holding the operand) at this run's start indices.
    std::vector<uint8_t> block;
    int64_t block_at = 0;
    if (n.windows != nullptr && n.windows->update) {
      const DynamicUpdate& u = *n.windows->update;
      const DramTensor& operand = n.inputs.at(static_cast<size_t>(u.source));
      uint8_t* out = At(n.outputs.at(0));
      if (At(operand) != out) std::memmove(out, At(operand), static_cast<size_t>(operand.bytes));
      const InputMemory at = [&](int64_t input) -> const uint8_t* {
        return At(n.inputs.at(static_cast<size_t>(input)));
      };
      block_at = UpdateOffset(*n.windows, at);
      const auto bytes = static_cast<size_t>(analysis::ByteSize(n.windows->fusion->shape()));
      if (u.contiguous) {
        dram[first_output] = std::span<uint8_t>(out + block_at, bytes);
      } else {
        block.assign(bytes, 0);
        dram[first_output] = std::span<uint8_t>(block);
      }
    }
    for (const IGraph& part : n.igraphs) {
      if (code_ == nullptr || !code_->Run(part, dram)) igraph::Interpret(part, dram);
    }
    if (!block.empty()) {
      const DynamicUpdate& u = *n.windows->update;
      CopyBlock(u.dims, u.sizes, hlo::StorageBytes(n.outputs.at(0).shape.element_type()), block_at,
                At(n.outputs.at(0)), block.data(), /*into_whole=*/true);
    }
  }

  // A dot chain, block of rows by block of rows (DotChainPlan). With
  // machine code the blocks are spread over the worker threads, each GEMM
  // on one thread; on the interpreter they run in order.
  void RunChain(const KernelNode& n) {
    const DotChainPlan& c = *n.chain;
    const int64_t per_batch = (c.rows + c.block_rows - 1) / c.block_rows;
    const int64_t tasks = c.batch * per_batch;
    auto run = [&](int64_t begin, int64_t end) { RunChainBlocks(n, per_batch, begin, end); };
    if (code_ == nullptr || tasks == 1 || runtime::NumThreads() == 1) {
      run(0, tasks);
      return;
    }
    runtime::SingleThreadedGemm scope;
    runtime::ParallelFor(tasks, 1, run);
  }

  // Blocks [begin, end) of a dot chain, numbered batch-major.
  void RunChainBlocks(const KernelNode& n, int64_t per_batch, int64_t begin, int64_t end) {
    const DotChainPlan& c = *n.chain;
    const auto block_bytes = static_cast<size_t>(c.BlockBytes());
    // Both blocks in one buffer of this thread's, kept between calls.
    thread_local std::vector<uint8_t> blocks;
    if (blocks.size() < 2 * block_bytes + 64) blocks.resize(2 * block_bytes + 64);
    uint8_t* first = blocks.data() + (64 - reinterpret_cast<uintptr_t>(blocks.data()) % 64) % 64;
    uint8_t* second = first + block_bytes;
    DramBuffers dram;
    int64_t id = 0;
    dram[id++] = std::span<uint8_t>(first, block_bytes);
    for (int64_t s : c.scalars) {
      const DramTensor& t = n.inputs.at(static_cast<size_t>(s));
      dram[id++] = std::span<uint8_t>(At(t), static_cast<size_t>(t.bytes));
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
    const uint8_t* a = At(n.inputs.at(static_cast<size_t>(c.a)));
    const uint8_t* b = At(n.inputs.at(static_cast<size_t>(c.b)));
    const uint8_t* cc = At(n.inputs.at(static_cast<size_t>(c.c)));
    uint8_t* out = At(n.outputs.at(0));
    const int64_t e = c.element_bytes;
    runtime::GemmPlan g1 = c.first, g2 = c.second;
    for (int64_t task = begin; task < end; ++task) {
      const int64_t batch = task / per_batch;
      const int64_t r0 = task % per_batch * c.block_rows;
      const int64_t rows = std::min(c.block_rows, c.rows - r0);
      g1.m = g2.m = rows;
      runtime::RunGemm(g1, a + (batch * c.a_batch + r0 * c.a_row) * e, b + batch * c.b_batch * e,
                       first);
      const size_t from = rows == c.block_rows ? 0 : c.full_parts;
      const size_t to = rows == c.block_rows ? c.full_parts : n.igraphs.size();
      for (size_t k = from; k < to; ++k) {
        if (code_ == nullptr || !code_->Run(n.igraphs[k], dram)) {
          igraph::Interpret(n.igraphs[k], dram);
        }
      }
      runtime::RunGemm(g2, second, cc + batch * c.c_batch * e,
                       out + (batch * c.out_batch + r0 * c.out_row) * e);
    }
  }

  // The library op of a library node with an epilogue, on the evaluator:
  // its operands are fusion parameters, so node inputs.
  void RunLibrary(const KernelNode& n) {
    if (n.library->opcode() == HloOpcode::kDot &&
        TryGemm(*n.library,
                n.inputs.at(static_cast<size_t>(n.library->operand(0)->parameter_number())),
                n.inputs.at(static_cast<size_t>(n.library->operand(1)->parameter_number())),
                n.outputs.at(0))) {
      return;
    }
    std::vector<hlo::Literal> operands;
    for (const HloInstruction* o : n.library->operands()) {
      operands.push_back(Read(n.inputs.at(static_cast<size_t>(o->parameter_number()))));
    }
    hlo::Literal result = EvaluateOne(*n.library, operands);
    Write(n.outputs.at(0), result);
  }

  // A dot of f32 or f64 row-major matrices (with leading batch dims) on
  // BLAS, straight on the buffers; false when it is not of that form.
  bool TryGemm(const HloInstruction& dot, const DramTensor& lhs, const DramTensor& rhs,
               const DramTensor& out) {
    runtime::GemmPlan plan;
    if (!PlanGemm(dot, lhs, rhs, out, &plan)) return false;
    runtime::RunGemm(plan, At(lhs), At(rhs), At(out));
    return true;
  }

  void RunOnEvaluator(const KernelNode& n) {
    const HloInstruction& inst = *n.instruction;
    if (inst.opcode() == HloOpcode::kDot && n.inputs.size() == 2 && n.outputs.size() == 1 &&
        TryGemm(inst, n.inputs[0], n.inputs[1], n.outputs[0])) {
      return;
    }
    std::vector<hlo::Literal> operands;
    size_t next = 0;
    for (const HloInstruction* o : inst.operands()) {
      operands.push_back(Assemble(o->shape(), n.inputs, next));
    }
    hlo::Literal result = EvaluateOne(inst, operands);
    next = 0;
    Scatter(result, n.outputs, next);
  }

  // `inst` alone on the evaluator, on `operands`.
  hlo::Literal EvaluateOne(const HloInstruction& inst, const std::vector<hlo::Literal>& operands) {
    auto c = std::make_unique<hlo::HloComputation>("node." + inst.name());
    hlo::ComputationBuilder b(c.get());
    std::vector<HloInstruction*> params;
    std::vector<const hlo::Literal*> args;
    for (size_t i = 0; i < operands.size(); ++i) {
      params.push_back(b.Parameter(static_cast<int64_t>(i), inst.operand(i)->shape(),
                                   "arg" + std::to_string(i)));
      args.push_back(&operands[i]);
    }
    HloInstruction* clone = c->AddInstruction(inst.CloneWithNewOperands(inst.shape(), params));
    c->set_root(clone);
    eval::Participant self;
    self.partitions = static_cast<int>(std::max<int64_t>(1, partitions_));
    return eval::EvaluateComputation(*c, args, self);
  }

  const buffers::BufferAssignment& ba_;
  uint8_t* const* bases_;
  const KernelCode* code_ = nullptr;
  int64_t partitions_ = 1;
};

}  // namespace

std::optional<WhileLoop> InPlaceWhile(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kWhile) {
    return std::nullopt;
  }
  const HloInstruction& inst = *n.instruction;
  auto computation = [&](hlo::AttrKey key) {
    auto c = inst.attributes().GetOr<hlo::HloComputation*>(key);
    return c ? *c : nullptr;
  };
  const hlo::HloComputation* cond = computation(hlo::AttrKey::kCondition);
  const hlo::HloComputation* body = computation(hlo::AttrKey::kBody);
  WhileLoop loop;
  loop.condition = SubgraphFor(n, cond);
  loop.body = SubgraphFor(n, body);
  if (loop.condition == nullptr || loop.body == nullptr ||
      !CallsInPlace(ba, *body, {inst.operand(0)}, inst) ||
      !SamePlaces(ValueLeaves(ba, cond->parameter(0)), ValueLeaves(ba, &inst)) ||
      !SamePlaces(ValueLeaves(ba, inst.operand(0)), ValueLeaves(ba, &inst))) {
    return std::nullopt;
  }
  const std::vector<DramTensor> predicate = ValueLeaves(ba, cond->root());
  if (predicate.size() != 1) return std::nullopt;
  loop.predicate = predicate[0];
  return loop;
}

std::optional<Branches> InPlaceBranches(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kConditional) {
    return std::nullopt;
  }
  const HloInstruction& inst = *n.instruction;
  std::vector<hlo::HloComputation*> computations;
  if (auto b = inst.attributes().GetOr<std::vector<hlo::HloComputation*>>(
          hlo::AttrKey::kBranchComputations)) {
    computations = *b;
  } else {
    for (hlo::AttrKey key : {hlo::AttrKey::kTrueComputation, hlo::AttrKey::kFalseComputation}) {
      auto c = inst.attributes().GetOr<hlo::HloComputation*>(key);
      computations.push_back(c ? *c : nullptr);
    }
  }
  Branches out;
  for (size_t i = 0; i < computations.size(); ++i) {
    const KernelGraph* g = SubgraphFor(n, computations[i]);
    if (g == nullptr ||
        !CallsInPlace(ba, *computations[i], {inst.operand(static_cast<int64_t>(i) + 1)}, inst)) {
      return std::nullopt;
    }
    out.graphs.push_back(g);
  }
  const std::vector<DramTensor> selector = ValueLeaves(ba, inst.operand(0));
  if (selector.size() != 1) return std::nullopt;
  out.selector = selector[0];
  return out;
}

const KernelGraph* InPlaceCall(const KernelNode& n, const buffers::BufferAssignment& ba) {
  if (n.kind != NodeKind::kControlFlow || n.instruction == nullptr ||
      n.instruction->opcode() != HloOpcode::kCall) {
    return nullptr;
  }
  const HloInstruction& inst = *n.instruction;
  const auto called = inst.called_computations();
  if (called.size() != 1) return nullptr;
  const KernelGraph* callee = SubgraphFor(n, called[0]);
  std::vector<const HloInstruction*> args(inst.operands().begin(), inst.operands().end());
  if (callee == nullptr || !CallsInPlace(ba, *called[0], args, inst)) return nullptr;
  return callee;
}

namespace {

// A value of `shape` over array leaves counted from `next` (data left
// null); false when a leaf is missing.
bool CallBufferOf(const hlo::Shape& shape, size_t leaves, size_t& next, runtime::CallBuffer& b) {
  if (shape.IsTuple()) {
    b.kind = runtime::CallBuffer::Kind::kTuple;
    for (const hlo::Shape& s : shape.tuple_shapes()) {
      b.elements.emplace_back();
      if (!CallBufferOf(s, leaves, next, b.elements.back())) return false;
    }
  } else if (shape.IsArray()) {
    if (next >= leaves) return false;
    ++next;
    b.type = shape.element_type();
    b.dims = shape.dimensions();
  } else {
    b.kind = runtime::CallBuffer::Kind::kToken;
  }
  return true;
}

}  // namespace

std::optional<runtime::CallFrame> CustomCallFrameOf(const KernelNode& n) {
  if (n.kind != NodeKind::kCustomCall || n.instruction == nullptr) return std::nullopt;
  const HloInstruction& inst = *n.instruction;
  for (const std::vector<DramTensor>* side : {&n.inputs, &n.outputs}) {
    for (const DramTensor& t : *side) {
      if (!IsRowMajor(t.shape)) return std::nullopt;
    }
  }
  if (inst.shape().IsBuffer()) return std::nullopt;
  runtime::CallFrame frame;
  frame.target = n.op;
  frame.call = inst.name();
  if (const auto config =
          inst.attributes().GetOr<hlo::BackendConfig>(hlo::AttrKey::kBackendConfig)) {
    frame.opaque = config->text;
  }
  size_t next = 0;
  for (const HloInstruction* o : inst.operands()) {
    if (o->shape().IsBuffer()) return std::nullopt;
    frame.operands.emplace_back();
    if (!CallBufferOf(o->shape(), n.inputs.size(), next, frame.operands.back())) {
      return std::nullopt;
    }
  }
  if (next != n.inputs.size()) return std::nullopt;
  next = 0;
  if (!CallBufferOf(inst.shape(), n.outputs.size(), next, frame.result) ||
      next != n.outputs.size()) {
    return std::nullopt;
  }
  return frame;
}

void ForEachCallLeaf(runtime::CallFrame& frame,
                     const std::function<void(runtime::CallBuffer&)>& fn) {
  std::function<void(runtime::CallBuffer&)> visit = [&](runtime::CallBuffer& b) {
    if (b.IsTuple()) {
      for (runtime::CallBuffer& e : b.elements) visit(e);
    } else if (b.IsArray()) {
      fn(b);
    }
  };
  for (runtime::CallBuffer& o : frame.operands) visit(o);
  visit(frame.result);
}

namespace {

// A library node's two-operand op of `opcode` (alone, or inside a fusion
// whose parameters are its operands) and the tensors of its operands and
// result.
struct LibraryOp {
  const HloInstruction* op = nullptr;
  DramTensor lhs, rhs, out;
};
std::optional<LibraryOp> LibraryOpOf(const KernelNode& n, HloOpcode opcode) {
  if (n.kind != NodeKind::kLibrary || n.chain != nullptr || n.outputs.empty()) return std::nullopt;
  LibraryOp l;
  l.out = n.outputs[0];
  if (n.library != nullptr && n.library->opcode() == opcode) {
    l.op = n.library;
    const auto lhs = static_cast<size_t>(l.op->operand(0)->parameter_number());
    const auto rhs = static_cast<size_t>(l.op->operand(1)->parameter_number());
    if (lhs >= n.inputs.size() || rhs >= n.inputs.size()) return std::nullopt;
    l.lhs = n.inputs[lhs];
    l.rhs = n.inputs[rhs];
    return l;
  }
  if (n.library == nullptr && n.instruction != nullptr && n.igraphs.empty() &&
      n.instruction->opcode() == opcode && n.inputs.size() == 2 && n.outputs.size() == 1) {
    l.op = n.instruction;
    l.lhs = n.inputs[0];
    l.rhs = n.inputs[1];
    return l;
  }
  return std::nullopt;
}

}  // namespace

std::optional<NodeGemm> GemmOf(const KernelNode& n) {
  const std::optional<LibraryOp> dot = LibraryOpOf(n, HloOpcode::kDot);
  if (!dot) return std::nullopt;
  NodeGemm g{{}, dot->lhs, dot->rhs, dot->out, dot->out.shape.element_type()};
  if (!hlo::IsNarrowFloat(g.storage)) {
    if (!PlanGemm(*dot->op, g.lhs, g.rhs, g.out, &g.plan)) return std::nullopt;
    return g;
  }
  // One narrow type throughout: planned as the f32 product it runs as.
  auto wide = [&](DramTensor t) {
    if (t.shape.element_type() != g.storage) return std::optional<DramTensor>();
    t.shape.set_element_type(hlo::PrimitiveType::kF32);
    return std::optional<DramTensor>(std::move(t));
  };
  const auto lhs = wide(g.lhs), rhs = wide(g.rhs), out = wide(g.out);
  if (!lhs || !rhs || !out || !PlanGemm(*dot->op, *lhs, *rhs, *out, &g.plan)) return std::nullopt;
  if (g.plan.lda != 0 || g.plan.ldb != 0 || g.plan.ldc != 0) return std::nullopt;
  return g;
}

std::optional<NodeConv> ConvOf(const KernelNode& n) {
  const std::optional<LibraryOp> op = LibraryOpOf(n, HloOpcode::kConvolution);
  if (!op) return std::nullopt;
  const HloInstruction* conv = op->op;
  NodeConv c{{}, op->lhs, op->rhs, op->out, op->out.shape.element_type()};
  const hlo::PrimitiveType t = c.storage;
  if ((t != hlo::PrimitiveType::kF32 && t != hlo::PrimitiveType::kF64 && !hlo::IsNarrowFloat(t)) ||
      c.input.shape.element_type() != t || c.kernel.shape.element_type() != t) {
    return std::nullopt;
  }
  const auto& a = conv->attributes();
  if (a.GetOr<int64_t>(hlo::AttrKey::kBatchGroupCount).value_or(1) != 1) return std::nullopt;
  const int64_t groups = a.GetOr<int64_t>(hlo::AttrKey::kFeatureGroupCount).value_or(1);
  const auto& dn = a.Get<hlo::ConvolutionDimensionNumbers>(hlo::AttrKey::kDimLabels);
  const size_t spatial = dn.input_spatial_dimensions.size();
  if (spatial > static_cast<size_t>(runtime::ConvPlan::kMaxSpatial) ||
      dn.kernel_spatial_dimensions.size() != spatial ||
      dn.output_spatial_dimensions.size() != spatial) {
    return std::nullopt;
  }
  const std::vector<hlo::WindowDim> window =
      a.GetOr<hlo::Window>(hlo::AttrKey::kWindow)
          .value_or(hlo::Window{std::vector<hlo::WindowDim>(spatial)})
          .dimensions;
  if (window.size() != spatial) return std::nullopt;
  const std::vector<int64_t> is = PhysicalStrides(c.input.shape);
  const std::vector<int64_t> ks = PhysicalStrides(c.kernel.shape);
  const std::vector<int64_t> os = PhysicalStrides(c.out.shape);
  const auto& id = c.input.shape.dimensions();
  const auto& kd = c.kernel.shape.dimensions();
  const auto& od = c.out.shape.dimensions();
  runtime::ConvPlan& p = c.plan;
  p.f64 = t == hlo::PrimitiveType::kF64;
  p.spatial = static_cast<int>(spatial);
  p.batch = od[dn.output_batch_dimension];
  p.groups = groups;
  p.in_features = kd[dn.kernel_input_feature_dimension];
  const int64_t out_features = kd[dn.kernel_output_feature_dimension];
  if (groups < 1 || out_features % groups != 0 ||
      id[dn.input_feature_dimension] != p.in_features * groups ||
      od[dn.output_feature_dimension] != out_features || id[dn.input_batch_dimension] != p.batch) {
    return std::nullopt;
  }
  p.out_features = out_features / groups;
  p.in_batch = is[dn.input_batch_dimension];
  p.in_feature = is[dn.input_feature_dimension];
  p.kernel_in = ks[dn.kernel_input_feature_dimension];
  p.kernel_out = ks[dn.kernel_output_feature_dimension];
  p.out_batch = os[dn.output_batch_dimension];
  p.out_feature = os[dn.output_feature_dimension];
  for (size_t d = 0; d < spatial; ++d) {
    const hlo::WindowDim& w = window[d];
    p.in_size[d] = id[dn.input_spatial_dimensions[d]];
    p.out_size[d] = od[dn.output_spatial_dimensions[d]];
    p.window[d] = kd[dn.kernel_spatial_dimensions[d]];
    if (w.size != p.window[d]) return std::nullopt;
    p.stride[d] = w.stride;
    p.pad_low[d] = w.padding_low;
    p.base_dilation[d] = w.base_dilation;
    p.window_dilation[d] = w.window_dilation;
    p.reversed[d] = w.window_reversal;
    p.in_spatial[d] = is[dn.input_spatial_dimensions[d]];
    p.kernel_spatial[d] = ks[dn.kernel_spatial_dimensions[d]];
    p.out_spatial[d] = os[dn.output_spatial_dimensions[d]];
  }
  if (!p.Invalid().empty()) return std::nullopt;
  return c;
}

void KernelGraph::WriteConstants(uint8_t* const* allocations) const {
  for (const auto& [at, value] : constants_) {
    WriteTensor(allocations[at.allocation] + at.offset, at, value->bytes().data());
  }
}

void KernelGraph::RunNodeOn(const KernelNode& node, uint8_t* const* allocations,
                            const KernelCode* code) const {
  Runner(*module_, *assignment_, allocations, code).RunNode(node);
}

std::vector<const IGraph*> KernelGraph::AllIGraphs() const {
  std::vector<const IGraph*> out;
  for (const KernelNode& n : nodes_) {
    for (const IGraph& g : n.igraphs) out.push_back(&g);
    for (const KernelGraph& sub : n.subgraphs) {
      for (const IGraph* g : sub.AllIGraphs()) out.push_back(g);
    }
  }
  return out;
}

std::vector<DramTensor> KernelGraph::ParameterLeaves(int64_t i) const {
  return ValueLeaves(*assignment_, module_->entry()->parameter(i));
}

std::vector<DramTensor> KernelGraph::ResultLeaves() const {
  return ValueLeaves(*assignment_, module_->entry()->root());
}

void WriteTensor(uint8_t* at, const DramTensor& t, const uint8_t* row_major) {
  const int64_t size = hlo::StorageBytes(t.shape.element_type());
  if (IsRowMajor(t.shape)) {
    std::memcpy(at, row_major, static_cast<size_t>(t.shape.element_count() * size));
    return;
  }
  const std::vector<int64_t> order = PhysicalOrder(t.shape);
  for (size_t i = 0; i < order.size(); ++i) {
    std::memcpy(at + order[i] * size, row_major + i * size, static_cast<size_t>(size));
  }
}

void ReadTensor(const uint8_t* at, const DramTensor& t, uint8_t* row_major) {
  const int64_t size = hlo::StorageBytes(t.shape.element_type());
  if (IsRowMajor(t.shape)) {
    std::memcpy(row_major, at, static_cast<size_t>(t.shape.element_count() * size));
    return;
  }
  const std::vector<int64_t> order = PhysicalOrder(t.shape);
  for (size_t i = 0; i < order.size(); ++i) {
    std::memcpy(row_major + i * size, at + order[i] * size, static_cast<size_t>(size));
  }
}

bool IsRowMajorTensor(const DramTensor& t) { return IsRowMajor(t.shape); }

hlo::Literal KernelGraph::Interpret(const std::vector<hlo::Literal>& args) const {
  return RunWith(args, nullptr);
}

hlo::Literal KernelGraph::RunWith(const std::vector<hlo::Literal>& args,
                                  const KernelCode* code) const {
  const hlo::HloComputation& entry = *module_->entry();
  if (args.size() != static_cast<size_t>(entry.num_parameters())) {
    throw ShapeError("the Kernel Graph of " + name_ + " takes " +
                     std::to_string(entry.num_parameters()) + " arguments, got " +
                     std::to_string(args.size()));
  }
  std::vector<Block> memory;
  std::vector<uint8_t*> bases;
  for (const buffers::Allocation& a : assignment_->allocations()) {
    memory.emplace_back(std::max<int64_t>(a.size, 1));
    bases.push_back(memory.back().data);
  }
  WriteConstants(bases.data());
  Runner runner(*module_, *assignment_, bases.data(), code);
  for (const HloInstruction* p : entry.parameters()) {
    const hlo::Literal& arg = args[p->parameter_number()];
    if (!eval::SameArrays(arg.shape(), p->shape())) {
      throw ShapeError("argument " + std::to_string(p->parameter_number()) + " has shape " +
                       arg.shape().ToString() + "; parameter %" + p->name() + " is " +
                       p->shape().ToString());
    }
    size_t next = 0;
    runner.Scatter(arg, ValueLeaves(*assignment_, p), next);
  }
  runner.Run(*this);
  size_t next = 0;
  return runner.Assemble(entry.root()->shape(), ValueLeaves(*assignment_, entry.root()), next);
}

}  // namespace uir::igraph
