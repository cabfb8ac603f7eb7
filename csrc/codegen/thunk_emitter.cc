// Emitting thunks: each node's slices from buffer assignment, the Kernel
// Graph's own runner for what has no thunk of its own yet.
#include "codegen/thunk_emitter.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "analysis/liveness.h"
#include "codegen/collective_plans.h"
#include "codegen/dot_chain_thunk.h"
#include "codegen/library_plans.h"
#include "hlo/collective_groups.h"
#include "runtime/async_thunk.h"
#include "runtime/call_thunk.h"
#include "runtime/collective_thunk.h"
#include "runtime/conditional_thunk.h"
#include "runtime/conv_thunk.h"
#include "runtime/copy_thunk.h"
#include "runtime/custom_call_thunk.h"
#include "runtime/gemm_thunk.h"
#include "runtime/host_thunk.h"
#include "runtime/library_thunks.h"
#include "support/error.h"

namespace uir::codegen {
namespace {

using runtime::BufferSlice;
using runtime::BufferUse;

BufferSlice SliceOf(const igraph::DramTensor& t) { return {t.allocation, t.offset, t.bytes}; }

// The node's inputs (a dynamic window as its whole source: where it lies
// is known only at run time) and outputs.
std::vector<BufferUse> NodeUses(const igraph::KernelNode& n) {
  std::vector<BufferUse> uses;
  std::vector<bool> window(n.inputs.size(), false);
  if (n.windows != nullptr) {
    for (const igraph::DynamicWindow& w : n.windows->windows) {
      window[static_cast<size_t>(w.input)] = true;
    }
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (!window[i]) uses.push_back(BufferUse::Read(SliceOf(n.inputs[i])));
  }
  for (const igraph::DramTensor& t : n.outputs) uses.push_back(BufferUse::Write(SliceOf(t)));
  return uses;
}

// Arithmetic per run of a node's iGraphs, for profiles: an element of an
// elementwise iOp, compare, convert or select is one operation, a reduction
// one per input element, each body executed numParallel x numLoop times.
int64_t FlopsOf(const igraph::KernelNode& n) {
  int64_t flops = 0;
  for (const igraph::IGraph& g : n.igraphs) {
    const int64_t runs = g.num_parallel() * g.num_loop();
    for (const igraph::Section s :
         {igraph::Section::kPrologue, igraph::Section::kBody, igraph::Section::kEpilogue}) {
      int64_t per_run = 0;
      for (const igraph::IOp& op : g.ops(s)) {
        switch (op.kind) {
          case igraph::OpKind::kUnary:
          case igraph::OpKind::kBinary:
          case igraph::OpKind::kTernary:
          case igraph::OpKind::kCompare:
          case igraph::OpKind::kConvert:
            per_run += g.slices()[op.outputs[0]].elements();
            break;
          case igraph::OpKind::kReduce:
            per_run += g.slices()[op.inputs[0]].elements();
            break;
          default:
            break;
        }
      }
      flops += s == igraph::Section::kBody ? per_run * runs : per_run;
    }
  }
  return flops;
}

// Dram traffic of a node's iGraphs per run.
int64_t BytesOf(const igraph::KernelNode& n) {
  int64_t bytes = 0;
  for (const igraph::IGraph& g : n.igraphs) bytes += g.DramBytesRead() + g.DramBytesWritten();
  return bytes;
}

int64_t FlopsOf(const runtime::GemmPlan& p) { return 2 * p.batch * p.m * p.n * p.k; }

int64_t FlopsOf(const runtime::ConvPlan& p) {
  int64_t out = p.batch * p.groups * p.out_features, window = p.in_features;
  for (int d = 0; d < p.spatial; ++d) {
    out *= p.out_size[static_cast<size_t>(d)];
    window *= p.window[static_cast<size_t>(d)];
  }
  return 2 * out * window;
}

// The bytes a node reads and writes, once each.
int64_t NodeBytes(const igraph::KernelNode& n) {
  int64_t bytes = 0;
  for (const igraph::DramTensor& t : n.inputs) bytes += t.bytes;
  for (const igraph::DramTensor& t : n.outputs) bytes += t.bytes;
  return bytes;
}

// What a host thunk does, for the text.
std::string HostWhat(const igraph::KernelNode& n) {
  if (n.kind == igraph::NodeKind::kFallback) return "evaluator: " + n.reason;
  if (n.chain != nullptr) return "dot chain";
  if (n.windows != nullptr) return n.windows->update ? "dynamic update" : "dynamic windows";
  if (n.library != nullptr) return "library op on the evaluator, then its epilogue";
  if (!n.scratch_bytes.empty()) return "kernel with scratch";
  if (!n.igraphs.empty()) return "kernel with parts on the interpreter";
  if (n.kind == igraph::NodeKind::kCopy && n.instruction != nullptr &&
      n.instruction->opcode() == hlo::HloOpcode::kBitcastConvert) {
    return "bitcast-convert in place";
  }
  if (n.kind == igraph::NodeKind::kCopy) return "dynamic copy";
  return "evaluator";
}

// A copy that is one memcpy: the same shape and layout on both sides, or a
// bitcast-convert between row-major buffers of one size (the Kernel Graph
// made it a copy node for that reason).
bool IsPlainCopy(const igraph::KernelNode& n) {
  if (n.kind != igraph::NodeKind::kCopy || n.instruction == nullptr || n.inputs.size() != 1 ||
      n.outputs.size() != 1) {
    return false;
  }
  const hlo::HloOpcode op = n.instruction->opcode();
  const igraph::DramTensor& in = n.inputs[0];
  const igraph::DramTensor& out = n.outputs[0];
  const bool bitcast = op == hlo::HloOpcode::kBitcastConvert && n.igraphs.empty();
  if (op != hlo::HloOpcode::kCopy && !bitcast) return false;
  return in.bytes == out.bytes && (bitcast || in.shape == out.shape) &&
         !SliceOf(in).Overlaps(SliceOf(out));
}

// A copy-start's work as one memcpy, when it is one: the operand copied
// into the destination element {0}, of the same shape and layout, with the
// source element {1} the operand itself (dataflow aliases them) and no
// other array but the context. Null otherwise (the node runs as it is).
std::unique_ptr<runtime::Thunk> CopyStartWork(const igraph::KernelNode& n) {
  if (n.inputs.size() != 1 || n.outputs.size() < 2) return nullptr;
  const igraph::DramTensor& in = n.inputs[0];
  const igraph::DramTensor& to = n.outputs[0];
  const igraph::DramTensor& from = n.outputs[1];
  if (to.shape != in.shape || to.bytes != in.bytes || SliceOf(to).Overlaps(SliceOf(in)) ||
      from.allocation != in.allocation || from.offset != in.offset || from.bytes != in.bytes) {
    return nullptr;
  }
  return runtime::CopyThunk::Create(n.name, SliceOf(in), SliceOf(to));
}

class Emitter {
 public:
  Emitter(const ThunkEmitterInputs& in, const hlo::HloModule& module)
      : in_(in),
        participants_(hlo::RequiredParticipants(module)),
        partitions_(static_cast<int>(std::max<int64_t>(1, module.config().num_partitions))) {}

  runtime::ThunkExecutor Emit(const igraph::KernelGraph& graph) {
    runtime::ThunkSequence thunks;
    const std::set<const hlo::HloInstruction*> unread = UnreadIndices(graph);
    for (const igraph::KernelNode& n : graph.nodes()) {
      if (unread.contains(n.instruction)) continue;
      EmitNode(graph, n, thunks);
    }
    return runtime::ThunkExecutor::Create(std::move(thunks), in_.options);
  }

  // The iotas that only arg-reduce thunks take, which count their indices
  // themselves and never read them: nothing need write them (argmax over
  // rows then reads the values alone, as max does).
  static std::set<const hlo::HloInstruction*> UnreadIndices(const igraph::KernelGraph& graph) {
    std::set<const hlo::HloInstruction*> reduces, candidates, out;
    for (const igraph::KernelNode& n : graph.nodes()) {
      if (n.instruction != nullptr && ArgReduceOf(n)) {
        reduces.insert(n.instruction);
        candidates.insert(n.instruction->operand(1));
      }
    }
    for (const hlo::HloInstruction* index : candidates) {
      const hlo::HloInstruction* root = index->opcode() == hlo::HloOpcode::kFusion
                                            ? index->called_computations().at(0)->root()
                                            : index;
      if (root->opcode() != hlo::HloOpcode::kIota || index == index->parent()->root() ||
          index->users().empty()) {
        continue;
      }
      const bool only_reduces =
          std::all_of(index->users().begin(), index->users().end(),
                      [&](const hlo::HloInstruction* u) { return reduces.contains(u); });
      if (only_reduces) out.insert(index);
    }
    return out;
  }

 private:
  void EmitNode(const igraph::KernelGraph& graph, const igraph::KernelNode& n,
                runtime::ThunkSequence& out) {
    if (igraph::NothingToRun(n)) return;
    const auto parts = in_.kernels->find(&n);
    const bool compiled = parts != in_.kernels->end();
    if ((compiled || n.igraphs.empty()) && IsPlainCopy(n)) {
      out.push_back(
          runtime::CopyThunk::Create(n.name, SliceOf(n.inputs[0]), SliceOf(n.outputs[0])));
      return;
    }
    if (compiled && n.library == nullptr) {
      out.push_back(runtime::KernelThunk::Create(n.name, parts->second, NodeUses(n)));
      out.back()->set_flops(FlopsOf(n));
      out.back()->set_bytes_moved(BytesOf(n));
      return;
    }
    if (n.chain != nullptr) {
      if (const std::optional<ChainGemms> gemms = PlanChainGemms(n)) {
        const igraph::KernelCode* code = in_.code;
        out.push_back(runtime::HostThunk::Create(
            n.name, "dot chain",
            [&n, gemms = *gemms, code](const runtime::ExecuteParams& p) {
              RunDotChain(n, gemms, p.allocations, code);
            },
            NodeUses(n), /*ordered=*/false));
        return;
      }
    }
    // A lone dot or convolution, or one whose epilogue then finishes its
    // output in place: as machine code, or where the emitter refused one
    // of its parts, by the Kernel Graph's runner.
    auto library = [&](std::unique_ptr<runtime::Thunk> op) {
      out.push_back(std::move(op));
      if (n.library == nullptr) return;
      if (compiled) {
        out.push_back(
            runtime::KernelThunk::Create(n.name + ".epilogue", parts->second, NodeUses(n)));
        out.back()->set_flops(FlopsOf(n));
        out.back()->set_bytes_moved(BytesOf(n));
        return;
      }
      const igraph::KernelCode* code = in_.code;
      out.push_back(runtime::HostThunk::Create(
          n.name + ".epilogue", HostWhat(n),
          [&n, code](const runtime::ExecuteParams& p) {
            igraph::KernelGraph::RunEpilogue(n, p.allocations, code);
          },
          NodeUses(n), /*ordered=*/false));
    };
    {
      if (const std::optional<NodeGemm> gemm = GemmOf(n)) {
        auto thunk =
            runtime::GemmThunk::Create(n.name, gemm->plan, SliceOf(gemm->lhs), SliceOf(gemm->rhs),
                                       SliceOf(gemm->out), gemm->storage);
        thunk->set_flops(FlopsOf(gemm->plan));
        library(std::move(thunk));
        return;
      }
      if (const std::optional<NodeConv> conv = ConvOf(n)) {
        auto thunk = runtime::ConvThunk::Create(n.name, conv->plan, SliceOf(conv->input),
                                                SliceOf(conv->kernel), SliceOf(conv->out),
                                                conv->storage, conv->input_type, conv->kernel_type);
        thunk->set_flops(FlopsOf(conv->plan));
        library(std::move(thunk));
        return;
      }
      if (const std::optional<NodeDot> dot = DotOf(n)) {
        auto thunk = runtime::DotThunk::Create(n.name, dot->plan, SliceOf(dot->lhs),
                                               SliceOf(dot->rhs), SliceOf(dot->out));
        thunk->set_flops(2 * dot->plan.Batch() * dot->plan.M() * dot->plan.N() * dot->plan.K());
        thunk->set_bytes_moved(dot->lhs.bytes + dot->rhs.bytes + dot->out.bytes);
        library(std::move(thunk));
        return;
      }
    }
    if (const std::optional<NodeArgReduce> a = ArgReduceOf(n)) {
      auto thunk = runtime::ArgReduceThunk::Create(n.name, a->plan, SliceOf(a->values),
                                                   SliceOf(a->init_value), SliceOf(a->init_index),
                                                   SliceOf(a->out_value), SliceOf(a->out_index));
      thunk->set_bytes_moved(a->values.bytes + a->out_value.bytes + a->out_index.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeGather> ga = GatherOf(n)) {
      auto thunk = runtime::GatherThunk::Create(n.name, ga->plan, SliceOf(ga->operand),
                                                SliceOf(ga->indices), SliceOf(ga->out));
      thunk->set_bytes_moved(2 * ga->out.bytes + ga->indices.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeScatter> sc = ScatterOf(n)) {
      auto thunk = runtime::ScatterThunk::Create(n.name, sc->plan, SliceOf(sc->operand),
                                                 SliceOf(sc->indices), SliceOf(sc->updates),
                                                 SliceOf(sc->out));
      // In place, only the windows are read and written; else the operand
      // is copied first.
      const bool in_place =
          sc->operand.allocation == sc->out.allocation && sc->operand.offset == sc->out.offset;
      thunk->set_bytes_moved(2 * sc->updates.bytes + sc->indices.bytes +
                             (in_place ? 0 : sc->operand.bytes + sc->out.bytes));
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeSort> so = SortOf(n)) {
      std::vector<BufferSlice> ins, outs;
      for (const igraph::DramTensor& t : so->inputs) ins.push_back(SliceOf(t));
      for (const igraph::DramTensor& t : so->outputs) outs.push_back(SliceOf(t));
      auto thunk = runtime::SortThunk::Create(n.name, so->plan, std::move(ins), std::move(outs));
      thunk->set_bytes_moved(NodeBytes(n));
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeTopK> tk = TopKOf(n)) {
      auto thunk = runtime::TopKThunk::Create(n.name, tk->plan, SliceOf(tk->input),
                                              SliceOf(tk->values), SliceOf(tk->indices));
      thunk->set_bytes_moved(tk->input.bytes + tk->values.bytes + tk->indices.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeFft> f = FftOf(n)) {
      auto thunk = runtime::FftThunk::Create(n.name, f->plan, SliceOf(f->input), SliceOf(f->out));
      thunk->set_bytes_moved(f->input.bytes + f->out.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeRngBits> r = RngBitsOf(n)) {
      auto thunk = runtime::RngBitsThunk::Create(n.name, r->plan, SliceOf(r->state_in),
                                                 SliceOf(r->state_out), SliceOf(r->bits));
      thunk->set_bytes_moved(r->bits.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeRng> r = RngOf(n)) {
      auto thunk =
          runtime::RngThunk::Create(n.name, r->plan, SliceOf(r->a), SliceOf(r->b), SliceOf(r->out));
      thunk->set_bytes_moved(r->out.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (const std::optional<NodeWindow> w = WindowOf(n)) {
      auto thunk = runtime::WindowThunk::Create(n.name, w->plan, SliceOf(w->input),
                                                SliceOf(w->init), SliceOf(w->out));
      thunk->set_bytes_moved(w->input.bytes + w->out.bytes);
      out.push_back(std::move(thunk));
      return;
    }
    if (n.kind == igraph::NodeKind::kControlFlow && EmitControlFlow(graph, n, out)) return;
    if (std::optional<CallFrame> frame = igraph::CustomCallFrameOf(n)) {
      std::vector<BufferSlice> operands, results;
      for (const igraph::DramTensor& t : n.inputs) operands.push_back(SliceOf(t));
      for (const igraph::DramTensor& t : n.outputs) results.push_back(SliceOf(t));
      out.push_back(runtime::CustomCallThunk::Create(n.name, std::move(*frame), std::move(operands),
                                                     std::move(results)));
      return;
    }
    const bool async_start = n.kind == igraph::NodeKind::kAsync && n.instruction != nullptr &&
                             n.instruction->opcode() == hlo::HloOpcode::kAsyncStart;
    if ((n.kind == igraph::NodeKind::kCollective || async_start) && EmitCollective(n, out)) return;
    const igraph::KernelCode* code = in_.code;
    const std::string evaluator = EvaluatorWork(n, graph.assignment());
    std::string what = evaluator.empty() ? HostWhat(n) : "evaluator: " + evaluator;
    // On the evaluator an op may keep state of its own (rng, collectives):
    // such thunks keep their order.
    const bool ordered = !evaluator.empty() || n.kind == igraph::NodeKind::kCustomCall;
    auto host = runtime::HostThunk::Create(
        n.name, std::move(what),
        [&n, code](const runtime::ExecuteParams& p) {
          igraph::KernelGraph::RunPrepared(n, p.allocations, code);
        },
        NodeUses(n), ordered, !evaluator.empty());
    // Kernels over dynamic windows read their windows, not the arrays.
    if (n.windows != nullptr && evaluator.empty()) host->set_bytes_moved(BytesOf(n));
    // Listed where the host thunk is the one that runs.
    auto listed = [&] {
      if (evaluator.empty()) return;
      if (in_.fallbacks != nullptr) in_.fallbacks->push_back(n.name + ": " + evaluator);
      if (in_.fallback_bytes != nullptr) in_.fallback_bytes->push_back(NodeBytes(n));
    };
    // An async-start, copy-start or all-reduce-start (or another
    // collective's start) runs its work on a thread of its own; its done
    // waits for it (async_thunk.h). A copy-start's work is a memcpy where
    // it can be.
    const hlo::HloInstruction* inst = n.instruction;
    if (inst != nullptr && analysis::IsAsyncStart(inst->opcode())) {
      std::unique_ptr<runtime::Thunk> work =
          inst->opcode() == hlo::HloOpcode::kCopyStart ? CopyStartWork(n) : nullptr;
      if (!work) listed();
      auto start =
          runtime::AsyncStartThunk::Create(n.name, work ? std::move(work) : std::move(host));
      async_starts_[inst] = start.get();
      out.push_back(std::move(start));
      return;
    }
    if (inst != nullptr &&
        (analysis::IsAsyncDone(inst->opcode()) || inst->opcode() == hlo::HloOpcode::kAsyncUpdate)) {
      const hlo::HloInstruction* from = inst->operand(0);
      while (from->opcode() == hlo::HloOpcode::kAsyncUpdate) from = from->operand(0);
      auto it = async_starts_.find(from);
      if (it != async_starts_.end()) {
        // A done whose results are the very leaves its start wrote (the
        // dataflow forwards them) has nothing left to do but wait.
        const bool in_place =
            std::all_of(n.outputs.begin(), n.outputs.end(), [&](const igraph::DramTensor& o) {
              return std::any_of(n.inputs.begin(), n.inputs.end(),
                                 [&](const igraph::DramTensor& i) {
                                   return i.allocation == o.allocation && i.offset == o.offset &&
                                          i.bytes == o.bytes;
                                 });
            });
        if (!in_place) listed();
        out.push_back(runtime::AsyncDoneThunk::Create(n.name, it->second,
                                                      in_place ? nullptr : std::move(host)));
        return;
      }
    }
    listed();
    out.push_back(std::move(host));
  }

  bool EmitCollective(const igraph::KernelNode& n, runtime::ThunkSequence& out) {
    std::string refused;
    std::optional<NodeCollective> c =
        CollectiveOf(n, participants_, partitions_, &next_collective_, &refused);
    if (!c) return false;
    // A start's operands forwarded into its result, where not in place.
    for (const auto& [from, to] : c->forwards) {
      out.push_back(runtime::CopyThunk::Create(n.name + ".operand", from, to));
    }
    auto thunk = runtime::CollectiveThunk::Create(n.name, std::move(c->parts));
    if (in_.collectives != nullptr) {
      for (const auto& part : thunk->parts()) in_.collectives->push_back(&part.plan);
    }
    thunk->set_bytes_moved(NodeBytes(n));
    const hlo::HloInstruction* inst = n.instruction;
    if (analysis::IsAsyncStart(inst->opcode())) {
      auto start = runtime::AsyncStartThunk::Create(n.name, std::move(thunk));
      async_starts_[inst] = start.get();
      out.push_back(std::move(start));
      return true;
    }
    out.push_back(std::move(thunk));
    return true;
  }

  bool EmitControlFlow(const igraph::KernelGraph& graph, const igraph::KernelNode& n,
                       runtime::ThunkSequence& out) {
    const buffers::BufferAssignment& ba = graph.assignment();
    if (const std::optional<igraph::WhileLoop> loop = igraph::InPlaceWhile(n, ba)) {
      if (loop->predicate.bytes != 1) return false;
      NativeLoop native;
      if (auto it = in_.loops->find(&n); it != in_.loops->end()) native = it->second;
      out.push_back(runtime::WhileThunk::Create(
          n.name, Emit(*loop->condition), Emit(*loop->body), SliceOf(loop->predicate), native.fn,
          native.scratch_bytes, native.hooks, native.constants));
      return true;
    }
    if (const std::optional<igraph::Branches> branches = igraph::InPlaceBranches(n, ba)) {
      const PrimitiveType t = branches->selector.shape.element_type();
      if (t != PrimitiveType::kPred && t != PrimitiveType::kS32) return false;
      std::vector<runtime::ThunkExecutor> sequences;
      for (const igraph::KernelGraph* g : branches->graphs) sequences.push_back(Emit(*g));
      out.push_back(runtime::ConditionalThunk::Create(n.name, SliceOf(branches->selector),
                                                      std::move(sequences)));
      return true;
    }
    if (const igraph::KernelGraph* callee = igraph::InPlaceCall(n, ba)) {
      out.push_back(runtime::CallThunk::Create(n.name, Emit(*callee)));
      return true;
    }
    return false;
  }

  const ThunkEmitterInputs& in_;
  const int participants_, partitions_;
  int64_t next_collective_ = 0;
  // Each async-start's thunk, for its done.
  std::map<const hlo::HloInstruction*, const runtime::AsyncStartThunk*> async_starts_;
};

}  // namespace

runtime::ThunkExecutor EmitThunks(const igraph::KernelGraph& graph, const ThunkEmitterInputs& in) {
  UIR_CHECK(in.kernels != nullptr && in.loops != nullptr) << "EmitThunks without its inputs";
  return Emitter(in, graph.module()).Emit(graph);
}

}  // namespace uir::codegen
