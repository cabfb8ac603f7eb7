// Lowering a scheduled, buffer-assigned module to a Kernel Graph, and its
// text. Running it is kernel_graph_run.cc.
#include "igraph/kernel_graph.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "analysis/dot_chain.h"
#include "eval/collectives.h"
#include "eval/evaluator.h"
#include "eval/reduce.h"
#include "eval/shape_ops.h"
#include "eval/typed.h"
#include "hlo/builder.h"
#include "igraph/interpreter.h"
#include "igraph/kernel_plan.h"
#include "igraph/tile_program.h"
#include "igraph/tiling.h"
#include "igraph/verifier.h"
#include "support/custom_call.h"
#include "support/error.h"
#include "support/thread_pool.h"

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
    case NodeKind::kCollective:
      return "collective";
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

std::vector<DramTensor> ValueLeaves(const buffers::BufferAssignment& ba,
                                    const HloInstruction* inst) {
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

namespace {

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

// Lone ops the target's library may run on their buffers (LibraryKernels).
bool IsLoneLibraryOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kFft:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRng:
    case HloOpcode::kTopK:
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

// `inst` alone in a computation of its own, over parameters of its
// operands' shapes, for the evaluator (EvaluatorStep).
std::shared_ptr<EvaluatorStep> PrepareEvaluatorStep(const HloInstruction& inst,
                                                    int64_t partitions) {
  auto step = std::make_shared<EvaluatorStep>();
  step->computation = std::make_unique<hlo::HloComputation>("node." + inst.name());
  hlo::ComputationBuilder b(step->computation.get());
  std::vector<HloInstruction*> params;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const hlo::Shape& shape = inst.operand(i)->shape();
    step->operand_shapes.push_back(shape);
    params.push_back(b.Parameter(i, shape, "arg" + std::to_string(i)));
  }
  HloInstruction* clone =
      step->computation->AddInstruction(inst.CloneWithNewOperands(inst.shape(), params));
  step->computation->set_root(clone);
  step->partitions = static_cast<int>(std::max<int64_t>(1, partitions));
  return step;
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

// Ops that meet other participants (or ask which participant runs them):
// the runtime runs them through the run's communicator.
bool IsCollectiveOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return true;
    default:
      return false;
  }
}

struct KernelParts {
  std::vector<IGraph> igraphs;
  std::vector<int64_t> scratch_bytes;
  std::vector<hlo::Literal> constants;
};

// A fusion of one dot or convolution whose operands are the fusion's
// parameters, with an elementwise epilogue of the same shape: that library
// op (a library call into the output, then the epilogue's iGraphs in
// place); null otherwise.
const HloInstruction* LibraryWithEpilogue(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kFusion) return nullptr;
  const hlo::HloComputation* f = inst.called_computations().at(0);
  const HloInstruction* lib = nullptr;
  for (const HloInstruction* x : f->instructions()) {
    if (!IsLibraryOp(x->opcode())) continue;
    if (lib != nullptr) return nullptr;
    lib = x;
  }
  if (lib == nullptr || lib == f->root() || !inst.shape().IsArray() ||
      lib->shape().dimensions() != inst.shape().dimensions() ||
      lib->shape().element_type() != inst.shape().element_type() ||
      PhysicalStrides(lib->shape()) != PhysicalStrides(inst.shape())) {
    return nullptr;
  }
  for (const HloInstruction* o : lib->operands()) {
    if (o->opcode() != HloOpcode::kParameter) return nullptr;
  }
  return lib;
}

// Called with each lowering step's name and its result as text.
using StageObserver = std::function<void(const std::string& step, const std::string& text)>;

std::string ProgramsText(const std::vector<TileProgram>& programs) {
  std::string out;
  for (const TileProgram& p : programs) out += TileProgramToText(p);
  return out;
}
std::string IGraphsText(const std::vector<IGraph>& graphs) {
  std::string out;
  for (const IGraph& g : graphs) out += ToText(g);
  return out;
}

// The iGraphs of `inst` (a fusion or a single op) with a kernel node's dram
// ids: its operands, then scratch, then constants, then outputs. With a
// `library` op inside the fusion, that op's result is the first scratch id
// and the iGraphs must finish it in place. The steps LoweringStages names,
// in order, each shown to `observe` when given. Planned and verified; false
// with the reason when it does not lower.
bool LowerParts(const HloInstruction& inst_ref, const HardwareModel& hardware,
                const HloInstruction* library, KernelParts* out, std::string* reason_out,
                const StageObserver* observe = nullptr) {
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
  if (observe != nullptr)
    (*observe)("tile-programs", ok ? ProgramsText(programs) : "refused: " + reason);
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
  const bool built = ok;
  if (built) {
    for (TileProgram& program : programs) CollapseDims(program);
    if (observe != nullptr) (*observe)("collapse", ProgramsText(programs));
  }
  for (size_t i = 0; ok && i < programs.size(); ++i) {
    std::vector<IGraph> parts;
    ok = LowerTileProgram(programs[i], hardware, &parts, &reason);
    for (IGraph& part : parts) out->igraphs.push_back(std::move(part));
  }
  if (!ok) {
    if (observe != nullptr && built) (*observe)("tile", "refused: " + reason);
    *out = KernelParts{};
    *reason_out = reason;
    return false;
  }
  if (observe != nullptr) (*observe)("tile", IGraphsText(out->igraphs));
  for (const PlanStep& step : PlanSteps()) {
    for (IGraph& part : out->igraphs) step.run(part);
    if (observe != nullptr) (*observe)("plan." + std::string(step.name), IGraphsText(out->igraphs));
  }
  for (const IGraph& part : out->igraphs) Verify(part);
  return true;
}

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
bool LowerDotChain(const analysis::DotChain& chain, const HardwareModel& hardware,
                   const LibraryKernels& library, KernelNode& node, std::string* reason) {
  auto input = [&](const HloInstruction* param) { return param->parameter_number(); };
  auto plan = std::make_shared<DotChainPlan>();
  DotChainPlan& p = *plan;
  p.first = chain.first;
  p.second = chain.second;
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
  if (!library.RunsGemm(*chain.first, a, b, mid) ||
      !library.RunsGemm(*chain.second, mid_lhs, c, out)) {
    *reason = "a dot chain whose operands are not row-major f32/f64 matrices";
    return false;
  }
  // The intermediate is [batch..., rows, n] (analysis/dot_chain.h).
  const std::vector<int64_t>& dims = chain.first->shape().dimensions();
  UIR_CHECK(dims.size() >= 2);
  for (size_t d = 0; d + 2 < dims.size(); ++d) p.batch *= dims[d];
  p.rows = dims[dims.size() - 2];
  p.n = dims.back();
  p.element_bytes = StorageBytes(out.shape.element_type());
  // Blocks as dot-chain-fusion planned them (one per batch where it did
  // not plan this chain).
  p.block_rows = analysis::DotChainBlockRows(chain, hardware.sram_bytes);
  if (p.block_rows <= 0) p.block_rows = p.rows;
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

std::vector<LoweringStage> LoweringStages(const HloInstruction& inst,
                                          const HardwareModel& hardware) {
  std::vector<LoweringStage> stages;
  const StageObserver observe = [&](const std::string& step, const std::string& text) {
    stages.push_back(LoweringStage{step, text});
  };
  KernelParts parts;
  std::string reason;
  // A library op with an epilogue lowers as the Kernel Graph lowers it:
  // the epilogue's iGraphs over the library op's result.
  LowerParts(inst, hardware, LibraryWithEpilogue(inst), &parts, &reason, &observe);
  return stages;
}

KernelGraph KernelGraph::Lower(const hlo::HloModule& module,
                               const buffers::BufferAssignment& assignment,
                               const HardwareModel& hardware, const LibraryKernels& library) {
  KernelGraph g;
  g.name_ = module.name();
  g.hardware_ = hardware;
  g.module_ = &module;
  g.assignment_ = &assignment;
  g.LowerComputation(*module.entry(), library);
  for (const auto& c : module.computations()) {
    if (!assignment.alias().dataflow().IsAnalysed(c.get())) continue;
    for (const HloInstruction* inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kConstant || !inst->shape().IsArray()) continue;
      g.constants_.emplace_back(ValueLeaves(assignment, inst).at(0), &inst->literal());
    }
  }
  return g;
}

void KernelGraph::LowerComputation(const hlo::HloComputation& computation,
                                   const LibraryKernels& library) {
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
      for (DramTensor& t : ValueLeaves(ba, o)) node.inputs.push_back(std::move(t));
    }
    node.outputs = ValueLeaves(ba, inst);
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
    std::optional<analysis::DotChain> chain;
    std::string chain_reason;
    if (op == HloOpcode::kFusion) {
      const HloInstruction* root = inst->called_computations().at(0)->root();
      if (root->opcode() == HloOpcode::kDot) chain = analysis::MatchDotChain(*root);
    }
    if (chain && LowerDotChain(*chain, hardware_, library, node, &chain_reason)) {
      node.kind = NodeKind::kLibrary;
      node.op = "dot-chain";
    } else if (op == HloOpcode::kFusion) {
      if (chain) node.reason = chain_reason;  // it runs as one library call
      const auto kind = inst->attributes().GetEnum<hlo::FusionKind>(hlo::AttrKey::kKind);
      bool library = kind == hlo::FusionKind::kOutput;
      for (const HloInstruction* f : inst->called_computations().at(0)->instructions()) {
        library = library || IsLibraryOp(f->opcode());
      }
      const HloInstruction* lib = library ? LibraryWithEpilogue(*inst) : nullptr;
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
    } else if (IsLoneLibraryOp(op) && library.Runs(node)) {
      node.kind = NodeKind::kLibrary;  // a loop of the runtime's, on the buffers
    } else if (IsDynamicCopy(*inst) && node.outputs.size() == 1 &&
               node.inputs.size() == static_cast<size_t>(inst->operand_count())) {
      node.kind = NodeKind::kCopy;  // a block copied at start indices read on each run
    } else if (op == HloOpcode::kBitcastConvert && IsRowMajor(inst->shape()) &&
               IsRowMajor(inst->operand(0)->shape()) && node.inputs.size() == 1 &&
               node.outputs.size() == 1 && node.inputs[0].bytes == node.outputs[0].bytes) {
      // The same bytes under another type (f32[4] -> u8[4,4] included, as
      // XLA lays them out on a little-endian host): one memcpy.
      node.kind = NodeKind::kCopy;
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
        sub.LowerComputation(*c, library);
        node.subgraphs.push_back(std::move(sub));
      }
    } else if (IsCollectiveOp(op)) {
      node.kind = NodeKind::kCollective;
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
    // What runs without an iGraph, described now: a dynamic copy's block
    // copy; for the evaluator, the op (or the library op before its
    // epilogue) alone in a computation of its own.
    const int64_t partitions = module_->config().num_partitions;
    if (node.kind == NodeKind::kCopy && node.igraphs.empty() && IsDynamicCopy(*inst)) {
      node.dynamic_copy = std::make_shared<DynamicCopyPlan>(PlanDynamicCopy(*inst));
    }
    if (node.library != nullptr) {
      std::shared_ptr<EvaluatorStep> step = PrepareEvaluatorStep(*node.library, partitions);
      for (const HloInstruction* o : node.library->operands()) {
        step->inputs.push_back(o->parameter_number());
      }
      node.evaluator = std::move(step);
    } else if (node.chain != nullptr || (node.igraphs.empty() && node.dynamic_copy == nullptr &&
                                         node.kind != NodeKind::kCopy)) {
      // A dot chain's too: the reference run (Interpret) runs it whole.
      node.evaluator = PrepareEvaluatorStep(*inst, partitions);
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
      out += n.instruction->opcode() == HloOpcode::kBitcastConvert
                 ? "  // the same bytes, copied"
                 : "  // a block copied at start indices read per run";
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

}  // namespace uir::igraph
