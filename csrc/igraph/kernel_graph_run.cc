// Running a Kernel Graph over memory laid out as buffer assignment says:
// iGraphs on the interpreter or as machine code, the rest on the evaluator
// (the reference the thunks of codegen are checked against, and the host
// thunk's way to run a node no other thunk runs yet).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>

#include "eval/collectives.h"
#include "eval/evaluator.h"
#include "eval/reduce.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/builder.h"
#include "igraph/interpreter.h"
#include "igraph/kernel_graph.h"
#include "igraph/tile_program.h"
#include "support/custom_call.h"
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

class Runner {
 public:
  // `ba` (needed for control flow only) may be null for prepared nodes.
  Runner(const buffers::BufferAssignment* ba, uint8_t* const* bases, const KernelCode* code)
      : ba_(ba), bases_(bases), code_(code) {}

  uint8_t* At(const DramTensor& t) { return bases_[t.allocation] + t.offset; }

  void Write(const DramTensor& t, const hlo::Literal& value) {
    const int64_t size = StorageBytes(t.shape.element_type());
    UIR_CHECK(static_cast<int64_t>(value.bytes().size()) >= t.shape.element_count() * size);
    WriteTensor(At(t), t, value.bytes().data());
  }
  hlo::Literal Read(const DramTensor& t) {
    hlo::Literal out(hlo::Shape(t.shape.element_type(), t.shape.dimensions()));
    ReadTensor(At(t), t, out.mutable_bytes().data());
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

  // A node of the reference run: iGraphs on the interpreter, control flow
  // in place, custom calls through the registry, every other node (library
  // nodes and dot chains included) on the evaluator.
  void RunNode(const KernelNode& n) {
    if (n.chain != nullptr) {
      RunStep(n);
    } else if (!n.igraphs.empty()) {
      RunKernel(n, /*library_ran=*/false);
    } else if (n.kind == NodeKind::kControlFlow && RunControlFlow(n)) {
      return;
    } else if (n.kind == NodeKind::kCustomCall && RunCustomCall(n)) {
      return;
    } else if (n.kind == NodeKind::kCopy) {
      RunCopy(n);
    } else {
      RunStep(n);
    }
  }

  // A node from what the lowering prepared: a compiled executable's host
  // thunk (the control flow, custom calls, dot chains and library ops with
  // kernels of their own have thunks of their own).
  void RunPrepared(const KernelNode& n) {
    if (n.chain == nullptr && !n.igraphs.empty()) {
      RunKernel(n, /*library_ran=*/false);
    } else if (n.kind == NodeKind::kCopy) {
      RunCopy(n);
    } else {
      RunStep(n);
    }
  }

  // The iGraphs of a node (through the code where it has them, else on the
  // interpreter) over its inputs, scratch, constants and outputs. A
  // library node's library op writes its output first: on the evaluator,
  // or, when `library_ran`, a thunk of the target's already did.
  void RunKernel(const KernelNode& n, bool library_ran) {
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
        if (!library_ran) RunLibrary(n);
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
      CopyBlock(u.dims, u.sizes, StorageBytes(n.outputs.at(0).shape.element_type()), block_at,
                At(n.outputs.at(0)), block.data(), /*into_whole=*/true);
    }
  }

 private:
  // A loop condition's or a branch selector's value, read where it lives.
  int64_t ReadScalar(const HloInstruction* root) {
    const analysis::HloValue& v = ba_->alias().dataflow().ValueAt(root, {});
    const buffers::Slice& slice = ba_->SliceOf(v);
    const uint8_t* at = bases_[slice.allocation] + slice.offset;
    switch (root->shape().element_type()) {
      case PrimitiveType::kPred:
      case PrimitiveType::kU8:
        return *at;
      case PrimitiveType::kS8:
        return *reinterpret_cast<const int8_t*>(at);
      case PrimitiveType::kS16:
        return Load<int16_t>(at);
      case PrimitiveType::kU16:
        return Load<uint16_t>(at);
      case PrimitiveType::kS32:
        return Load<int32_t>(at);
      case PrimitiveType::kU32:
        return Load<uint32_t>(at);
      case PrimitiveType::kS64:
      case PrimitiveType::kU64:
        return Load<int64_t>(at);
      default: {
        const std::vector<DramTensor> leaves = ValueLeaves(*ba_, root);
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
    UIR_CHECK(ba_ != nullptr);
    const HloInstruction& inst = *n.instruction;
    if (inst.opcode() == HloOpcode::kWhile) {
      const std::optional<WhileLoop> loop = InPlaceWhile(n, *ba_);
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
      const std::optional<Branches> branches = InPlaceBranches(n, *ba_);
      if (!branches) return false;
      const HloInstruction* selector = inst.operand(0);
      int64_t index = ReadScalar(selector);
      const auto count = static_cast<int64_t>(branches->graphs.size());
      if (selector->shape().element_type() == PrimitiveType::kPred) {
        index = index != 0 ? 0 : 1;
      } else if (index < 0 || index >= count) {
        index = count - 1;  // as XLA does
      }
      Run(*branches->graphs[static_cast<size_t>(index)]);
      return true;
    }
    if (const KernelGraph* callee = InPlaceCall(n, *ba_)) {
      Run(*callee);
      return true;
    }
    return false;
  }
  // A custom call straight on its buffers, through the registry (false:
  // the evaluator runs it; see CustomCallFrameOf).
  bool RunCustomCall(const KernelNode& n) {
    std::optional<CallFrame> frame = CustomCallFrameOf(n);
    if (!frame) return false;
    size_t next = 0;
    std::vector<const DramTensor*> leaves;
    for (const DramTensor& t : n.inputs) leaves.push_back(&t);
    for (const DramTensor& t : n.outputs) leaves.push_back(&t);
    ForEachCallLeaf(*frame, [&](CallBuffer& leaf) { leaf.data = At(*leaves[next++]); });
    uir::RunCustomCall(*frame);
    return true;
  }

  // A bitcast-convert in place (one memcpy) or a dynamic copy.
  void RunCopy(const KernelNode& n) {
    if (n.dynamic_copy == nullptr) {
      std::memmove(At(n.outputs.at(0)), At(n.inputs.at(0)),
                   static_cast<size_t>(n.outputs.at(0).bytes));
      return;
    }
    std::vector<const uint8_t*> in;
    for (const DramTensor& t : n.inputs) in.push_back(At(t));
    RunDynamicCopy(*n.dynamic_copy, in, At(n.outputs.at(0)));
  }

  // The library op of a library node with an epilogue, into the output,
  // on the evaluator (its operands are fusion parameters, so node inputs).
  void RunLibrary(const KernelNode& n) {
    const EvaluatorStep& step = *n.evaluator;
    std::vector<hlo::Literal> values;
    for (const int64_t k : step.inputs) values.push_back(Read(n.inputs.at(static_cast<size_t>(k))));
    Write(n.outputs.at(0), Evaluate(step, values));
  }

  // The node's evaluator step on its inputs, into its outputs.
  void RunStep(const KernelNode& n) {
    UIR_CHECK(n.evaluator != nullptr);
    const EvaluatorStep& step = *n.evaluator;
    std::vector<hlo::Literal> operands;
    size_t next = 0;
    for (const hlo::Shape& shape : step.operand_shapes) {
      operands.push_back(Assemble(shape, n.inputs, next));
    }
    next = 0;
    Scatter(Evaluate(step, operands), n.outputs, next);
  }

  static hlo::Literal Evaluate(const EvaluatorStep& step,
                               const std::vector<hlo::Literal>& operands) {
    std::vector<const hlo::Literal*> args;
    for (const hlo::Literal& v : operands) args.push_back(&v);
    eval::Participant self;
    self.partitions = step.partitions;
    return eval::EvaluateComputation(*step.computation, args, self);
  }

  const buffers::BufferAssignment* ba_ = nullptr;
  uint8_t* const* bases_;
  const KernelCode* code_ = nullptr;
};

}  // namespace

void KernelGraph::WriteConstants(uint8_t* const* allocations) const {
  for (const auto& [at, value] : constants_) {
    WriteTensor(allocations[at.allocation] + at.offset, at, value->bytes().data());
  }
}

bool NothingToRun(const KernelNode& n) {
  if (n.outputs.empty() || n.kind == NodeKind::kControlFlow || n.kind == NodeKind::kCustomCall ||
      n.kind == NodeKind::kAsync || n.instruction == nullptr ||
      hlo::HasSideEffectOpcode(n.instruction->opcode()) ||
      n.instruction->opcode() == HloOpcode::kRngBitGenerator) {
    return false;
  }
  return std::all_of(n.outputs.begin(), n.outputs.end(),
                     [](const DramTensor& t) { return t.shape.element_count() == 0; });
}

void KernelGraph::RunPrepared(const KernelNode& node, uint8_t* const* allocations,
                              const KernelCode* code) {
  Runner(nullptr, allocations, code).RunPrepared(node);
}

void KernelGraph::RunEpilogue(const KernelNode& node, uint8_t* const* allocations,
                              const KernelCode* code) {
  UIR_CHECK(node.library != nullptr && node.chain == nullptr && !node.igraphs.empty())
      << "RunEpilogue of a node without an epilogue: " << node.name;
  Runner(nullptr, allocations, code).RunKernel(node, /*library_ran=*/true);
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
  const int64_t size = StorageBytes(t.shape.element_type());
  if (IsRowMajor(t.shape)) {
    const int64_t bytes = t.shape.element_count() * size;
    if (bytes > 0) std::memcpy(at, row_major, static_cast<size_t>(bytes));
    return;
  }
  const std::vector<int64_t> order = PhysicalOrder(t.shape);
  for (size_t i = 0; i < order.size(); ++i) {
    std::memcpy(at + order[i] * size, row_major + i * size, static_cast<size_t>(size));
  }
}

void ReadTensor(const uint8_t* at, const DramTensor& t, uint8_t* row_major) {
  const int64_t size = StorageBytes(t.shape.element_type());
  if (IsRowMajor(t.shape)) {
    const int64_t bytes = t.shape.element_count() * size;
    if (bytes > 0) std::memcpy(row_major, at, static_cast<size_t>(bytes));
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
  Runner runner(assignment_, bases.data(), code);
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
