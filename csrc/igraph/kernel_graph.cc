// Lowering a scheduled, buffer-assigned module to a Kernel Graph, its
// text, and running it (iGraphs on the interpreter, the rest on the
// evaluator) over buffers laid out as buffer assignment says.
//
// Over 1,000 lines in one file for now: the lowering and the Runner share
// the helpers that place values in buffers (Leaves, the physical element
// order) and the node-building code, which no other file uses. The Runner
// is the part to move out, into the runtime, when thunks are built from
// the Kernel Graph without HLO (the backend issue's HLO-free runtime).
#include "igraph/kernel_graph.h"

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "analysis/dot_chain.h"
#include "eval/collectives.h"
#include "eval/evaluator.h"
#include "eval/reduce.h"
#include "eval/scatter.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/builder.h"
#include "igraph/interpreter.h"
#include "igraph/tile_program.h"
#include "igraph/tiling.h"
#include "igraph/verifier.h"
#include "runtime/custom_call.h"
#include "runtime/gemm.h"
#include "runtime/thread_pool.h"
#include "support/error.h"

namespace uir::igraph {

using hlo::HloInstruction;
using hlo::HloOpcode;

std::string_view NodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kKernel:
      return "kernel";
    case NodeKind::kCopy:
      return "copy";
    case NodeKind::kLibrary:
      return "library";
    case NodeKind::kCustomCall:
      return "custom-call";
    case NodeKind::kControlFlow:
      return "control-flow";
    case NodeKind::kAsync:
      return "async";
    case NodeKind::kFallback:
      return "fallback";
  }
  return "?";
}

int64_t KernelGraph::CountOf(NodeKind kind) const {
  int64_t n = 0;
  for (const KernelNode& node : nodes_) {
    if (node.kind == kind) ++n;
    for (const KernelGraph& sub : node.subgraphs) n += sub.CountOf(kind);
  }
  return n;
}

namespace {

// Array leaves of `inst`'s result as DRAM tensors.
std::vector<DramTensor> Leaves(const buffers::BufferAssignment& ba, const HloInstruction* inst) {
  std::vector<DramTensor> out;
  for (const analysis::ShapeIndex& index : analysis::AllIndices(inst->shape())) {
    const hlo::Shape& s = analysis::Subshape(inst->shape(), index);
    if (!s.IsArray()) continue;
    const analysis::HloValue& v = ba.alias().dataflow().ValueAt(inst, index);
    const buffers::Slice& slice = ba.SliceOf(v);
    DramTensor t;
    t.value = inst->name() + (index.empty() ? "" : analysis::IndexToString(index));
    t.allocation = slice.allocation;
    t.offset = slice.offset;
    t.bytes = analysis::ByteSize(s);
    t.shape = s;
    out.push_back(std::move(t));
  }
  return out;
}

bool IsLibraryOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kFft:
    case HloOpcode::kCholesky:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kSort:
      return true;
    default:
      return false;
  }
}

// Ops that only name other buffers (or nothing): no node.
bool IsAliasOnly(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBitcast:
    case HloOpcode::kAfterAll:
    case HloOpcode::kAddDependency:
    case HloOpcode::kOptimizationBarrier:
      return true;
    default:
      return false;
  }
}

std::string TensorList(const std::vector<DramTensor>& ts) {
  std::string out;
  for (size_t i = 0; i < ts.size(); ++i) {
    const DramTensor& t = ts[i];
    out += (i ? ", " : "") + t.value + ":" + t.shape.ToString() + "@" +
           std::to_string(t.allocation) + "+" + std::to_string(t.offset);
  }
  return out;
}

}  // namespace

namespace {

struct KernelParts {
  std::vector<IGraph> igraphs;
  std::vector<int64_t> scratch_bytes;
  std::vector<hlo::Literal> constants;
};

// The iGraphs of `inst` (a fusion or a single op) with a kernel node's dram
// ids: its operands, then scratch, then constants, then outputs. With a
// `library` op inside the fusion, that op's result is the first scratch id
// and the iGraphs must finish it in place. Verified; false with the reason
// when it does not lower.
bool LowerParts(const HloInstruction& inst_ref, const HardwareModel& hardware,
                const HloInstruction* library, KernelParts* out, std::string* reason_out) {
  const HloInstruction* inst = &inst_ref;
  std::vector<TileProgram> programs;
  std::vector<const HloInstruction*> scratch;
  std::string reason;
  bool ok = BuildTileProgram(*inst, &programs, &reason, &scratch, library);
  const int64_t inputs = inst->operand_count();
  for (const HloInstruction* s : scratch) {
    out->scratch_bytes.push_back(s == library ? 0 : analysis::ByteSize(s->shape()));
  }
  if (ok && library != nullptr) {
    // In place over the library's result: every read of it must be the
    // element the same iteration writes.
    for (const TileProgram& program : programs) {
      const TileOp* store = nullptr;
      for (const TileOp& op : program.ops) {
        if (op.kind == TileOp::Kind::kStore) store = &op;
      }
      for (const TileOp& op : program.ops) {
        const bool reads_result = op.kind == TileOp::Kind::kLoad &&
                                  program.tensors[op.tensor].kind == TileTensor::Kind::kScratch &&
                                  program.tensors[op.tensor].index == 0;
        if (reads_result && (store == nullptr || !(op.access == store->access))) ok = false;
      }
    }
    if (!ok) reason = "the epilogue does not read the library result element by element";
  }
  for (TileProgram& program : programs) {
    for (TileTensor& t : program.tensors) {
      if (t.kind == TileTensor::Kind::kScratch) t.id = inputs + t.index;
    }
  }
  // Constants get dram ids after those, numbered over all pieces.
  int64_t next_constant = inputs + static_cast<int64_t>(scratch.size());
  for (size_t i = 0; ok && i < programs.size(); ++i) {
    TileProgram& program = programs[i];
    for (TileTensor& t : program.tensors) {
      if (t.kind != TileTensor::Kind::kConstant) continue;
      t.id = next_constant++;
      out->constants.push_back(t.literal);
    }
  }
  for (TileProgram& program : programs) {
    for (TileTensor& t : program.tensors) {
      if (t.kind == TileTensor::Kind::kOutput) t.id = next_constant + t.index;
    }
  }
  for (size_t i = 0; ok && i < programs.size(); ++i) {
    std::vector<IGraph> parts;
    ok = LowerTileProgram(programs[i], hardware, &parts, &reason);
    for (IGraph& part : parts) out->igraphs.push_back(std::move(part));
  }
  if (!ok) {
    *out = KernelParts{};
    *reason_out = reason;
    return false;
  }
  for (const IGraph& part : out->igraphs) Verify(part);
  return true;
}

bool PlanGemm(const HloInstruction& dot, const DramTensor& lhs, const DramTensor& rhs,
              const DramTensor& out, runtime::GemmPlan* plan);

// A dot chain's epilogue for one block of `block` rows, as a fusion in a
// module of its own: parameter 0 is the block of the first dot's result,
// then the scalars in chain order. Reducers stay those of the original
// module (which outlives the Kernel Graph).
std::shared_ptr<hlo::HloModule> BlockEpilogue(const analysis::DotChain& chain, int64_t block,
                                              const HloInstruction** fusion_out) {
  auto module = std::make_shared<hlo::HloModule>("dot_chain." + chain.second->name());
  const std::vector<int64_t>& full = chain.first->shape().dimensions();
  const std::vector<int64_t> row(full.begin(), full.end() - 1);
  const int64_t n = full.back();
  auto shape_for = [&](const hlo::Shape& s) {
    std::vector<int64_t> dims;
    if (s.dimensions() == full) {
      dims = {block, n};
    } else if (s.dimensions() == row) {
      dims = {block};
    }
    hlo::Shape out(s.element_type(), dims);
    out.FillMissingLayouts();
    return out;
  };
  auto fused = std::make_unique<hlo::HloComputation>("epilogue");
  auto entry = std::make_unique<hlo::HloComputation>("entry");
  std::unordered_map<const HloInstruction*, HloInstruction*> clones;
  std::vector<const HloInstruction*> leaves = {chain.first};
  leaves.insert(leaves.end(), chain.scalars.begin(), chain.scalars.end());
  auto fusion = std::make_unique<HloInstruction>(HloOpcode::kFusion, hlo::Shape(), "epilogue");
  for (size_t i = 0; i < leaves.size(); ++i) {
    const hlo::Shape s = shape_for(leaves[i]->shape());
    const std::string name = i == 0 ? "block" : "scalar." + std::to_string(i);
    auto inner = std::make_unique<HloInstruction>(HloOpcode::kParameter, s, name);
    inner->set_parameter_number(static_cast<int64_t>(i));
    clones[leaves[i]] = fused->AddInstruction(std::move(inner));
    auto outer = std::make_unique<HloInstruction>(HloOpcode::kParameter, s, name);
    outer->set_parameter_number(static_cast<int64_t>(i));
    fusion->AppendOperand(entry->AddInstruction(std::move(outer)));
  }
  bool reduces = false;
  HloInstruction* root = nullptr;
  for (const HloInstruction* e : chain.epilogue) {
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : e->operands()) operands.push_back(clones.at(o));
    std::unique_ptr<HloInstruction> clone =
        e->CloneWithNewOperands(shape_for(e->shape()), operands);
    if (e->opcode() == HloOpcode::kReduce) {
      clone->mutable_attributes().Set(hlo::AttrKey::kDimensions, std::vector<int64_t>{1});
      reduces = true;
    } else if (e->opcode() == HloOpcode::kBroadcast && e->operand(0)->shape().rank() > 0) {
      clone->mutable_attributes().Set(hlo::AttrKey::kDimensions, std::vector<int64_t>{0});
    }
    root = clones[e] = fused->AddInstruction(std::move(clone));
  }
  UIR_CHECK(root != nullptr && chain.epilogue.back() == chain.second->operand(0));
  fused->set_root(root);
  fusion->mutable_attributes().SetEnum(hlo::AttrKey::kKind,
                                       reduces ? hlo::FusionKind::kInput : hlo::FusionKind::kLoop);
  fusion->mutable_attributes().Set(hlo::AttrKey::kCalls, module->AddComputation(std::move(fused)));
  fusion = fusion->CloneWithNewOperands(root->shape(), fusion->operands());
  *fusion_out = entry->AddInstruction(std::move(fusion));
  entry->set_root(const_cast<HloInstruction*>(*fusion_out));
  module->set_entry(module->AddComputation(std::move(entry)));
  return module;
}

// The plan of a fusion holding a dot chain, and its epilogue's iGraphs in
// `node`; false with the reason when it cannot run that way.
bool LowerDotChain(const analysis::DotChain& chain, const HardwareModel& hardware, KernelNode& node,
                   std::string* reason) {
  auto input = [&](const HloInstruction* param) { return param->parameter_number(); };
  auto plan = std::make_shared<DotChainPlan>();
  DotChainPlan& p = *plan;
  p.a = input(chain.a);
  p.b = input(chain.b);
  p.c = input(chain.c);
  for (const HloInstruction* s : chain.scalars) p.scalars.push_back(input(s));
  const DramTensor& a = node.inputs.at(static_cast<size_t>(p.a));
  const DramTensor& b = node.inputs.at(static_cast<size_t>(p.b));
  const DramTensor& c = node.inputs.at(static_cast<size_t>(p.c));
  if (node.outputs.size() != 1) {
    *reason = "a dot chain with more than one output";
    return false;
  }
  const DramTensor& out = node.outputs[0];
  DramTensor mid;
  mid.shape = chain.first->shape();
  DramTensor mid_lhs;
  mid_lhs.shape = chain.second->operand(0)->shape();
  if (!PlanGemm(*chain.first, a, b, mid, &p.first) ||
      !PlanGemm(*chain.second, mid_lhs, c, out, &p.second)) {
    *reason = "a dot chain whose operands are not row-major f32/f64 matrices";
    return false;
  }
  const std::vector<int64_t>& dims = chain.first->shape().dimensions();
  p.batch = p.first.batch;
  p.rows = p.first.m;
  p.n = p.first.n;
  p.element_bytes = hlo::StorageBytes(out.shape.element_type());
  // Blocks as dot-chain-fusion planned them (one per batch where it did
  // not plan this chain).
  p.block_rows = analysis::DotChainBlockRows(chain, hardware.sram_bytes);
  if (p.block_rows <= 0) p.block_rows = p.rows;
  p.a_batch = p.first.a_batch_stride;
  p.b_batch = p.first.b_batch_stride;
  p.c_batch = p.second.b_batch_stride;
  p.out_batch = p.second.c_batch_stride;
  p.a_row = p.first.trans_a ? 1 : p.first.k;
  p.out_row = p.second.n;
  // One block of one batch; the stored leading dimensions of whole matrices.
  p.first.lda = p.first.trans_a ? p.rows : p.first.k;
  p.first.ldb = p.first.trans_b ? p.first.k : p.first.n;
  p.first.ldc = p.n;
  p.second.lda = p.n;
  p.second.ldb = p.second.trans_b ? p.second.k : p.second.n;
  p.second.ldc = p.second.n;
  p.first.batch = p.second.batch = 1;
  UIR_CHECK(dims.back() == p.n && !p.second.trans_a);
  // The epilogue for a full block, then for the last one if shorter.
  std::vector<int64_t> blocks = {p.block_rows};
  if (p.rows % p.block_rows != 0) blocks.push_back(p.rows % p.block_rows);
  for (size_t k = 0; k < blocks.size(); ++k) {
    const HloInstruction* fusion = nullptr;
    std::shared_ptr<hlo::HloModule> module = BlockEpilogue(chain, blocks[k], &fusion);
    KernelParts parts;
    if (!LowerParts(*fusion, hardware, nullptr, &parts, reason)) {
      *reason = "the dot chain's epilogue: " + *reason;
      return false;
    }
    if (k == 0) {
      node.scratch_bytes = std::move(parts.scratch_bytes);
      node.constants = std::move(parts.constants);
      p.full_parts = parts.igraphs.size();
      p.epilogue = module;
    } else {
      // The shorter block uses the same dram ids: the same scratch values
      // (no larger) and the same constants.
      bool same = parts.scratch_bytes.size() == node.scratch_bytes.size() &&
                  parts.constants.size() == node.constants.size();
      for (size_t i = 0; same && i < parts.constants.size(); ++i) {
        same = parts.constants[i].bytes().size() == node.constants[i].bytes().size() &&
               std::equal(parts.constants[i].bytes().begin(), parts.constants[i].bytes().end(),
                          node.constants[i].bytes().begin());
      }
      if (!same) {
        *reason = "the dot chain's last block lowers unlike the others";
        node.scratch_bytes.clear();
        node.constants.clear();
        node.igraphs.clear();
        return false;
      }
    }
    for (IGraph& g : parts.igraphs) node.igraphs.push_back(std::move(g));
  }
  node.chain = std::move(plan);
  return true;
}

}  // namespace

KernelGraph KernelGraph::Lower(const hlo::HloModule& module,
                               const buffers::BufferAssignment& assignment,
                               const HardwareModel& hardware) {
  KernelGraph g;
  g.name_ = module.name();
  g.hardware_ = hardware;
  g.module_ = &module;
  g.assignment_ = &assignment;
  g.LowerComputation(*module.entry());
  for (const auto& c : module.computations()) {
    if (!assignment.alias().dataflow().IsAnalysed(c.get())) continue;
    for (const HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsArray()) continue;
      g.constants_.emplace_back(Leaves(assignment, inst).at(0), &inst->literal());
    }
  }
  return g;
}

void KernelGraph::LowerComputation(const hlo::HloComputation& computation) {
  const buffers::BufferAssignment& ba = *assignment_;
  std::vector<HloInstruction*> order;
  if (module_->has_schedule() && module_->schedule().sequence(computation) != nullptr) {
    order = *module_->schedule().sequence(computation);
  } else {
    order = computation.MakeInstructionPostOrder();
  }
  for (const HloInstruction* inst : order) {
    const HloOpcode op = inst->opcode();
    if (IsAliasOnly(op)) continue;
    KernelNode node;
    node.name = inst->name();
    node.op = std::string(hlo::OpcodeName(op));
    node.instruction = inst;
    for (const HloInstruction* o : inst->operands()) {
      for (DramTensor& t : Leaves(ba, o)) node.inputs.push_back(std::move(t));
    }
    node.outputs = Leaves(ba, inst);
    auto as_kernel = [&](NodeKind kind, const HloInstruction* library = nullptr) {
      KernelParts parts;
      std::string reason;
      if (!LowerParts(*inst, hardware_, library, &parts, &reason)) {
        node.kind = NodeKind::kFallback;
        node.reason = reason;
        return;
      }
      node.igraphs = std::move(parts.igraphs);
      node.scratch_bytes = std::move(parts.scratch_bytes);
      node.constants = std::move(parts.constants);
      node.kind = kind;
      node.library = library;
    };
    // A fusion of one dot or convolution whose operands are the fusion's
    // parameters, with an elementwise epilogue of the same shape: a library
    // call into the output, then the epilogue's iGraphs in place.
    auto library_with_epilogue = [&]() -> const HloInstruction* {
      const hlo::HloComputation* f = inst->called_computations().at(0);
      const HloInstruction* lib = nullptr;
      for (const HloInstruction* x : f->instructions()) {
        if (!IsLibraryOp(x->opcode())) continue;
        if (lib != nullptr) return nullptr;
        lib = x;
      }
      if (lib == nullptr || lib == f->root() || !inst->shape().IsArray() ||
          lib->shape().dimensions() != inst->shape().dimensions() ||
          lib->shape().element_type() != inst->shape().element_type() ||
          PhysicalStrides(lib->shape()) != PhysicalStrides(inst->shape())) {
        return nullptr;
      }
      for (const HloInstruction* o : lib->operands()) {
        if (o->opcode() != HloOpcode::kParameter) return nullptr;
      }
      return lib;
    };
    std::optional<analysis::DotChain> chain;
    std::string chain_reason;
    if (op == HloOpcode::kFusion) {
      const HloInstruction* root = inst->called_computations().at(0)->root();
      if (root->opcode() == HloOpcode::kDot) chain = analysis::MatchDotChain(*root);
    }
    if (chain && LowerDotChain(*chain, hardware_, node, &chain_reason)) {
      node.kind = NodeKind::kLibrary;
      node.op = "dot-chain";
    } else if (op == HloOpcode::kFusion) {
      if (chain) node.reason = chain_reason;  // it runs as one library call
      const auto kind = inst->attributes().GetEnum<hlo::FusionKind>(hlo::AttrKey::kKind);
      bool library = kind == hlo::FusionKind::kOutput;
      for (const HloInstruction* f : inst->called_computations().at(0)->instructions()) {
        library = library || IsLibraryOp(f->opcode());
      }
      const HloInstruction* lib = library ? library_with_epilogue() : nullptr;
      if (lib != nullptr) {
        as_kernel(NodeKind::kLibrary, lib);
        node.op = std::string(hlo::OpcodeName(lib->opcode())) + "+epilogue";
        if (node.kind == NodeKind::kFallback) {  // the whole fusion as one library call
          node.kind = NodeKind::kLibrary;
          node.op = "fusion(" + std::string(hlo::FusionKindName(kind)) + ")";
          node.reason.clear();
        }
      } else if (library) {
        node.kind = NodeKind::kLibrary;
        node.op = "fusion(" + std::string(hlo::FusionKindName(kind)) + ")";
      } else if (node.outputs.size() !=
                 (inst->shape().IsTuple() ? inst->shape().tuple_shapes().size() : size_t{1})) {
        node.kind = NodeKind::kFallback;
        node.reason = "nested tuple outputs";
      } else if (auto windows = WindowDynamicSlices(*inst)) {
        // Its dynamic-slices as windows: the rewritten fusion lowers, and
        // each window is one more input, over its source's memory.
        KernelParts parts;
        std::string reason;
        if (!LowerParts(*windows->fusion, hardware_, nullptr, &parts, &reason)) {
          node.kind = NodeKind::kFallback;
          node.reason = reason;
        } else {
          for (const DynamicWindow& w : windows->windows) {
            DramTensor t = node.inputs.at(static_cast<size_t>(w.source));
            t.value += "[" + w.name + "]";
            t.shape = windows->fusion->operand(w.input)->shape();
            t.bytes = analysis::ByteSize(t.shape);
            node.inputs.push_back(std::move(t));
          }
          node.igraphs = std::move(parts.igraphs);
          node.scratch_bytes = std::move(parts.scratch_bytes);
          node.constants = std::move(parts.constants);
          node.windows = std::move(windows);
          node.kind = NodeKind::kKernel;
        }
      } else {
        as_kernel(NodeKind::kKernel);
      }
    } else if (op == HloOpcode::kGather && IsRowMajor(inst->shape()) &&
               IsRowMajor(inst->operand(0)->shape()) && IsRowMajor(inst->operand(1)->shape()) &&
               hlo::BitWidth(inst->shape().element_type()) ==
                   8 * hlo::StorageBytes(inst->shape().element_type()) &&
               node.inputs.size() == 2 && node.outputs.size() == 1) {
      node.kind = NodeKind::kLibrary;  // eval::GatherBuffers, on the buffers
    } else if (eval::CanScatterBuffers(*inst) && IsRowMajor(inst->shape()) &&
               IsRowMajor(inst->operand(0)->shape()) && IsRowMajor(inst->operand(1)->shape()) &&
               IsRowMajor(inst->operand(2)->shape()) && node.inputs.size() == 3 &&
               node.outputs.size() == 1) {
      node.kind = NodeKind::kLibrary;  // eval::ScatterBuffers, on the buffers
    } else if (eval::CanReduceWindowBuffers(*inst) && IsRowMajor(inst->shape()) &&
               IsRowMajor(inst->operand(0)->shape()) && node.inputs.size() == 2 &&
               node.outputs.size() == 1) {
      node.kind = NodeKind::kLibrary;  // eval::ReduceWindowBuffers, on the buffers
    } else if (IsDynamicCopy(*inst) && node.outputs.size() == 1 &&
               node.inputs.size() == static_cast<size_t>(inst->operand_count())) {
      node.kind = NodeKind::kCopy;  // a block copied at start indices read on each run
    } else if (op == HloOpcode::kCopy) {
      as_kernel(NodeKind::kCopy);
    } else if (IsLibraryOp(op)) {
      node.kind = NodeKind::kLibrary;
    } else if (op == HloOpcode::kCustomCall) {
      node.kind = NodeKind::kCustomCall;
      node.op = inst->attributes().GetOr<std::string>(hlo::AttrKey::kCustomCallTarget).value_or("");
    } else if (op == HloOpcode::kWhile || op == HloOpcode::kConditional || op == HloOpcode::kCall) {
      node.kind = NodeKind::kControlFlow;
      for (const hlo::HloComputation* c : inst->called_computations()) {
        KernelGraph sub;
        sub.name_ = c->name();
        sub.hardware_ = hardware_;
        sub.module_ = module_;
        sub.assignment_ = assignment_;
        sub.LowerComputation(*c);
        node.subgraphs.push_back(std::move(sub));
      }
    } else if (op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
               op == HloOpcode::kAsyncDone || op == HloOpcode::kCopyStart ||
               op == HloOpcode::kCopyDone) {
      node.kind = NodeKind::kAsync;
    } else if (inst->shape().IsArray() && !node.outputs.empty()) {
      as_kernel(NodeKind::kKernel);
      if (node.kind == NodeKind::kFallback && node.reason.empty()) node.reason = "no lowering";
    } else {
      node.kind = NodeKind::kFallback;
      node.reason = op == HloOpcode::kReduce
                        ? "variadic reduce (several results at once)"
                        : "no lowering for " + std::string(hlo::OpcodeName(op));
    }
    nodes_.push_back(std::move(node));
  }
}

void KernelGraph::AppendText(std::string& out, int indent) const {
  const std::string pad(static_cast<size_t>(indent), ' ');
  for (const KernelNode& n : nodes_) {
    out += pad + std::string(NodeKindName(n.kind)) + " %" + n.name + " = " + n.op + "(" +
           TensorList(n.inputs) + ") -> (" + TensorList(n.outputs) + ")";
    if (n.kind == NodeKind::kFallback) out += "  // evaluator: " + n.reason;
    if (n.windows != nullptr && !n.windows->windows.empty()) {
      out += "  // dynamic-slice windows placed per run:";
      for (const DynamicWindow& w : n.windows->windows) {
        out += " %" + w.name + " = input " + std::to_string(w.input) + " in input " +
               std::to_string(w.source);
      }
    }
    if (n.windows != nullptr && n.windows->update) {
      out += "  // %" + n.windows->update->name +
             ": the iGraphs compute the update, written into the output at start indices "
             "read per run" +
             (n.windows->update->contiguous ? "" : " (through a block copy)");
    }
    if (n.kind == NodeKind::kCopy && n.igraphs.empty()) {
      out += "  // a block copied at start indices read per run";
    }
    if (n.kind == NodeKind::kLibrary && !n.reason.empty()) out += "  // " + n.reason;
    if (n.chain != nullptr) {
      const DotChainPlan& c = *n.chain;
      out += "  // per batch (" + std::to_string(c.batch) + ") and block of " +
             std::to_string(c.block_rows) + " of " + std::to_string(c.rows) +
             " rows: a GEMM into a scratch block of " + std::to_string(c.BlockBytes()) +
             " bytes, the epilogue's iGraphs into a second block, a GEMM into the output's rows";
    }
    if (n.library != nullptr) {
      out += "  // " + std::string(hlo::OpcodeName(n.library->opcode())) +
             " writes the output; the epilogue finishes it in place";
    }
    for (size_t i = n.library != nullptr ? 1 : 0; i < n.scratch_bytes.size(); ++i) {
      out += (i == (n.library != nullptr ? 1u : 0u) ? "  // scratch bytes " : ", ") +
             std::to_string(n.scratch_bytes[i]);
    }
    if (!n.igraphs.empty() && n.chain == nullptr) {
      int64_t read = 0, written = 0;
      for (const IGraph& g : n.igraphs) {
        read += g.DramBytesRead();
        written += g.DramBytesWritten();
      }
      out +=
          "  // dram bytes read " + std::to_string(read) + ", written " + std::to_string(written);
    }
    out += "\n";
    for (const IGraph& g : n.igraphs) {
      std::istringstream lines(igraph::ToText(g));
      std::string line;
      while (std::getline(lines, line)) out += pad + "  " + line + "\n";
    }
    for (const KernelGraph& sub : n.subgraphs) {
      out += pad + "  subgraph " + sub.name() + " {\n";
      sub.AppendText(out, indent + 4);
      out += pad + "  }\n";
    }
  }
}

std::string KernelGraph::ToText() const {
  std::string out = "KernelGraph " + name_ + " (" + hardware_.target +
                    ", numGroup=" + std::to_string(hardware_.num_group) +
                    ", numUnit=" + std::to_string(hardware_.num_unit) +
                    "): " + std::to_string(CountOf(NodeKind::kKernel)) + " kernels, " +
                    std::to_string(CountOf(NodeKind::kLibrary)) + " library, " +
                    std::to_string(CountOf(NodeKind::kFallback)) + " fallbacks\n";
  AppendText(out, 0);
  return out;
}

// --- Running ------------------------------------------------------------------

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

// The GEMM a dot is, when its operands and result are f32 or f64 row-major
// arrays, batch dimensions lead in the same order everywhere, and each
// operand has one contracting dimension and at most one free one.
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
    if (!SamePlaces(Leaves(ba, callee.parameter(static_cast<int64_t>(i))), Leaves(ba, args[i]))) {
      return false;
    }
  }
  return SamePlaces(Leaves(ba, callee.root()), Leaves(ba, &result));
}

class Runner {
 public:
  Runner(const hlo::HloModule& m, const buffers::BufferAssignment& ba,
         const std::vector<uint8_t*>& bases, const KernelCode* code,
         const std::vector<std::pair<DramTensor, const hlo::Literal*>>& constants)
      : ba_(ba), bases_(bases), code_(code), partitions_(m.config().num_partitions) {
    for (const auto& [at, value] : constants) Write(at, *value);  // outside fusions
  }

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
    const std::vector<KernelNode>& nodes = g.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      const KernelNode& n = nodes[i];
      if (code_ != nullptr) {
        const size_t ran = code_->RunConcurrently(n, bases_);
        if (ran > 0) {
          i += ran - 1;
          continue;
        }
        if (code_->RunNode(n, bases_)) continue;
      }
      if (n.chain != nullptr) {
        RunChain(n);
      } else if (!n.igraphs.empty()) {
        RunKernel(n);
      } else if (n.kind == NodeKind::kControlFlow && RunControlFlow(n)) {
        continue;
      } else if (n.kind == NodeKind::kCustomCall && RunCustomCall(n)) {
        continue;
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
        const std::vector<DramTensor> leaves = Leaves(ba_, root);
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
    auto computation = [&](hlo::AttrKey key) {
      auto c = inst.attributes().GetOr<hlo::HloComputation*>(key);
      return c ? *c : nullptr;
    };
    if (inst.opcode() == HloOpcode::kWhile) {
      const std::optional<WhileLoop> loop = InPlaceWhile(n, ba_);
      if (!loop) return false;
      const hlo::HloComputation* cond = computation(hlo::AttrKey::kCondition);
      while (true) {
        Run(*loop->condition);
        if (ReadScalar(cond->root()) == 0) return true;
        Run(*loop->body);
      }
    }
    if (inst.opcode() == HloOpcode::kConditional) {
      std::vector<hlo::HloComputation*> branches;
      if (auto b = inst.attributes().GetOr<std::vector<hlo::HloComputation*>>(
              hlo::AttrKey::kBranchComputations)) {
        branches = *b;
      } else {
        branches = {computation(hlo::AttrKey::kTrueComputation),
                    computation(hlo::AttrKey::kFalseComputation)};
      }
      for (size_t i = 0; i < branches.size(); ++i) {
        if (branches[i] == nullptr || SubgraphFor(n, branches[i]) == nullptr ||
            !CallsInPlace(ba_, *branches[i], {inst.operand(static_cast<int64_t>(i) + 1)}, inst)) {
          return false;
        }
      }
      const HloInstruction* selector = inst.operand(0);
      int64_t index = ReadScalar(selector);
      if (selector->shape().element_type() == hlo::PrimitiveType::kPred) {
        index = index != 0 ? 0 : 1;
      } else if (index < 0 || index >= static_cast<int64_t>(branches.size())) {
        index = static_cast<int64_t>(branches.size()) - 1;  // as XLA does
      }
      Run(*SubgraphFor(n, branches[static_cast<size_t>(index)]));
      return true;
    }
    if (inst.opcode() == HloOpcode::kCall) {
      const auto called = inst.called_computations();
      if (called.size() != 1 || SubgraphFor(n, called[0]) == nullptr) return false;
      std::vector<const HloInstruction*> args(inst.operands().begin(), inst.operands().end());
      if (!CallsInPlace(ba_, *called[0], args, inst)) return false;
      Run(*SubgraphFor(n, called[0]));
      return true;
    }
    return false;
  }
  // A custom call straight on its buffers, through the registry: arrays
  // where buffer assignment put them, a tuple as its elements. False (the
  // evaluator runs it) when a buffer is not row-major or the result is not
  // an array, tuple or token.
  bool RunCustomCall(const KernelNode& n) {
    const HloInstruction& inst = *n.instruction;
    for (const std::vector<DramTensor>* side : {&n.inputs, &n.outputs}) {
      for (const DramTensor& t : *side) {
        if (!IsRowMajor(t.shape)) return false;
      }
    }
    if (inst.shape().IsBuffer()) return false;
    runtime::CallFrame frame;
    frame.target = n.op;
    frame.call = inst.name();
    if (const auto config =
            inst.attributes().GetOr<hlo::BackendConfig>(hlo::AttrKey::kBackendConfig)) {
      frame.opaque = config->text;
    }
    size_t next = 0;
    for (const HloInstruction* o : inst.operands()) {
      if (o->shape().IsBuffer()) return false;
      frame.operands.push_back(CallBufferOf(o->shape(), n.inputs, next));
    }
    if (next != n.inputs.size()) return false;
    next = 0;
    frame.result = CallBufferOf(inst.shape(), n.outputs, next);
    if (next != n.outputs.size()) return false;
    runtime::RunCustomCall(frame);
    return true;
  }
  // A value of `shape` over its array leaves, taken from `leaves` at `next`.
  runtime::CallBuffer CallBufferOf(const hlo::Shape& shape, const std::vector<DramTensor>& leaves,
                                   size_t& next) {
    runtime::CallBuffer b;
    if (shape.IsTuple()) {
      b.kind = runtime::CallBuffer::Kind::kTuple;
      for (const hlo::Shape& s : shape.tuple_shapes())
        b.elements.push_back(CallBufferOf(s, leaves, next));
    } else if (shape.IsArray()) {
      if (next >= leaves.size()) {
        next = leaves.size() + 1;  // too few leaves: the caller's count check fails
        return b;
      }
      b.data = At(leaves[next++]);
      b.type = shape.element_type();
      b.dims = shape.dimensions();
    } else {
      b.kind = runtime::CallBuffer::Kind::kToken;
    }
    return b;
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
  const std::vector<uint8_t*>& bases_;
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
      !SamePlaces(Leaves(ba, cond->parameter(0)), Leaves(ba, &inst)) ||
      !SamePlaces(Leaves(ba, inst.operand(0)), Leaves(ba, &inst))) {
    return std::nullopt;
  }
  const std::vector<DramTensor> predicate = Leaves(ba, cond->root());
  if (predicate.size() != 1) return std::nullopt;
  loop.predicate = predicate[0];
  return loop;
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
  return Leaves(*assignment_, module_->entry()->parameter(i));
}

std::vector<DramTensor> KernelGraph::ResultLeaves() const {
  return Leaves(*assignment_, module_->entry()->root());
}

void KernelGraph::RunOn(const std::vector<uint8_t*>& allocations, const KernelCode* code) const {
  UIR_CHECK(allocations.size() == assignment_->allocations().size());
  Runner(*module_, *assignment_, allocations, code, constants_).Run(*this);
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

hlo::Literal KernelGraph::Run(const std::vector<hlo::Literal>& args, const KernelCode& code) const {
  return RunWith(args, &code);
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
  Runner runner(*module_, *assignment_, bases, code, constants_);
  for (const HloInstruction* p : entry.parameters()) {
    const hlo::Literal& arg = args[p->parameter_number()];
    if (!eval::SameArrays(arg.shape(), p->shape())) {
      throw ShapeError("argument " + std::to_string(p->parameter_number()) + " has shape " +
                       arg.shape().ToString() + "; parameter %" + p->name() + " is " +
                       p->shape().ToString());
    }
    size_t next = 0;
    runner.Scatter(arg, Leaves(*assignment_, p), next);
  }
  runner.Run(*this);
  size_t next = 0;
  return runner.Assemble(entry.root()->shape(), Leaves(*assignment_, entry.root()), next);
}

}  // namespace uir::igraph
