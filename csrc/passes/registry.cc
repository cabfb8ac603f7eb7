// The pass table and the default pipeline, which reads top to bottom.
#include "passes/registry.h"

#include <functional>
#include <map>
#include <stdexcept>

#include "passes/algsimp/algsimp.h"
#include "passes/batchnorm_expander.h"
#include "passes/call_inliner.h"
#include "passes/constant_folding.h"
#include "passes/copy_insertion.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/flatten_call_graph.h"
#include "passes/fusion/dot_chain_fusion.h"
#include "passes/fusion/library_defuser.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/priority_fusion.h"
#include "passes/layout_assignment.h"
#include "passes/layout_normalization.h"
#include "passes/map_inliner.h"
#include "passes/reduce_expander.h"
#include "passes/scatter_expander.h"
#include "passes/tuple_simplifier.h"
#include "passes/while_loop_simplifier.h"
#include "schedule/passes.h"

namespace uir::passes {
namespace {

using Factory = std::function<std::unique_ptr<HloPass>()>;

template <typename T>
Factory Make() {
  return [] { return std::make_unique<T>(); };
}

const std::map<std::string, Factory>& Table() {
  static const std::map<std::string, Factory> kTable = {
      {"algsimp", Make<AlgebraicSimplifier>()},
      {"batchnorm_expander", Make<BatchNormExpander>()},
      {"call-inliner", Make<CallInliner>()},
      {"constant-folding", Make<ConstantFolding>()},
      {"copy-insertion", Make<CopyInsertion>()},
      {"cse", Make<Cse>()},
      {"dce", Make<Dce>()},
      {"flatten-call-graph", Make<FlattenCallGraph>()},
      {"latency-hiding-scheduler", Make<schedule::LatencyHidingSchedulerPass>()},
      {"layout-assignment", Make<LayoutAssignment>()},
      {"library-defuser", Make<LibraryDefuser>()},
      {"layout-normalization", Make<LayoutNormalization>()},
      {"map-inliner", Make<MapInliner>()},
      {"memory-scheduler", Make<schedule::MemorySchedulerPass>()},
      {"multi-output-fusion", Make<MultiOutputFusion>()},
      {"dot-chain-fusion", Make<DotChainFusion>()},
      {"priority-fusion", Make<PriorityFusion>()},
      {"reduce-expander", Make<ReduceExpander>()},
      {"scatter-expander", Make<ScatterExpander>()},
      {"tuple-simplifier", Make<TupleSimplifier>()},
      {"while-loop-simplifier", Make<WhileLoopSimplifier>()},
  };
  return kTable;
}

}  // namespace

std::vector<std::string> AvailablePasses() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : Table()) out.push_back(name);
  return out;
}

std::unique_ptr<HloPass> CreatePass(const std::string& name) {
  auto it = Table().find(name);
  if (it == Table().end()) {
    std::string list;
    for (const std::string& n : AvailablePasses()) list += (list.empty() ? "" : ", ") + n;
    // invalid_argument: Python's ValueError.
    throw std::invalid_argument("unknown pass '" + name + "'; available: " + list);
  }
  return it->second();
}

std::unique_ptr<HloPassPipeline> MakePipeline(const std::vector<std::string>& names) {
  auto pipeline = std::make_unique<HloPassPipeline>("passes");
  for (const std::string& n : names) pipeline->AddPass(CreatePass(n));
  return pipeline;
}

namespace {

void AddSimplification(HloPassPipeline& pipeline) {
  HloPassPipeline* p = &pipeline;
  p->Add<CallInliner>();
  p->Add<LibraryDefuser>();
  p->Add<MapInliner>();
  p->Add<ScatterExpander>();
  p->Add<BatchNormExpander>();
  HloPassPipeline* simplify = p->AddFixedPoint("simplification");
  simplify->Add<AlgebraicSimplifier>();
  simplify->Add<ConstantFolding>();
  simplify->Add<TupleSimplifier>();
  simplify->Add<WhileLoopSimplifier>();
  simplify->Add<Dce>();
  simplify->Add<Cse>();
  // After algsimp split variadic reduces of independent operands.
  p->Add<ReduceExpander>();
}

}  // namespace

std::unique_ptr<HloPassPipeline> SimplificationPipeline() {
  auto p = std::make_unique<HloPassPipeline>("simplify");
  AddSimplification(*p);
  return p;
}

std::unique_ptr<HloPassPipeline> DefaultPipeline() {
  auto p = std::make_unique<HloPassPipeline>("default");
  AddSimplification(*p);
  p->Add<LayoutAssignment>();
  p->Add<LayoutNormalization>();
  p->Add<AlgebraicSimplifier>();
  p->Add<Dce>();
  p->Add<Cse>();
  p->Add<DotChainFusion>();
  p->Add<PriorityFusion>();
  p->Add<MultiOutputFusion>();
  p->Add<Cse>();
  p->Add<CopyInsertion>();
  p->Add<FlattenCallGraph>();
  p->Add<schedule::MemorySchedulerPass>();
  p->Add<schedule::LatencyHidingSchedulerPass>();
  return p;
}

}  // namespace uir::passes
