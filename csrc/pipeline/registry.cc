// The pass table and the default pipeline, which reads top to bottom.
#include "pipeline/registry.h"

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

namespace uir::pipeline {
namespace {

using Factory = std::function<std::unique_ptr<passes::HloPass>()>;

template <typename T>
Factory Make() {
  return [] { return std::make_unique<T>(); };
}

const std::map<std::string, Factory>& Table() {
  static const std::map<std::string, Factory> kTable = {
      {"algsimp", Make<passes::AlgebraicSimplifier>()},
      {"batchnorm_expander", Make<passes::BatchNormExpander>()},
      {"call-inliner", Make<passes::CallInliner>()},
      {"constant-folding", Make<passes::ConstantFolding>()},
      {"copy-insertion", Make<passes::CopyInsertion>()},
      {"cse", Make<passes::Cse>()},
      {"dce", Make<passes::Dce>()},
      {"flatten-call-graph", Make<passes::FlattenCallGraph>()},
      {"latency-hiding-scheduler", Make<schedule::LatencyHidingSchedulerPass>()},
      {"layout-assignment", Make<passes::LayoutAssignment>()},
      {"library-defuser", Make<passes::LibraryDefuser>()},
      {"layout-normalization", Make<passes::LayoutNormalization>()},
      {"map-inliner", Make<passes::MapInliner>()},
      {"memory-scheduler", Make<schedule::MemorySchedulerPass>()},
      {"multi-output-fusion", Make<passes::MultiOutputFusion>()},
      {"dot-chain-fusion", Make<passes::DotChainFusion>()},
      {"priority-fusion", Make<passes::PriorityFusion>()},
      {"reduce-expander", Make<passes::ReduceExpander>()},
      {"scatter-expander", Make<passes::ScatterExpander>()},
      {"tuple-simplifier", Make<passes::TupleSimplifier>()},
      {"while-loop-simplifier", Make<passes::WhileLoopSimplifier>()},
  };
  return kTable;
}

}  // namespace

std::vector<std::string> AvailablePasses() {
  std::vector<std::string> out;
  for (const auto& [name, factory] : Table()) out.push_back(name);
  return out;
}

std::unique_ptr<passes::HloPass> CreatePass(const std::string& name) {
  auto it = Table().find(name);
  if (it == Table().end()) {
    std::string list;
    for (const std::string& n : AvailablePasses()) list += (list.empty() ? "" : ", ") + n;
    // invalid_argument: Python's ValueError.
    throw std::invalid_argument("unknown pass '" + name + "'; available: " + list);
  }
  return it->second();
}

std::unique_ptr<passes::HloPassPipeline> MakePipeline(const std::vector<std::string>& names) {
  auto pipeline = std::make_unique<passes::HloPassPipeline>("passes");
  for (const std::string& n : names) pipeline->AddPass(CreatePass(n));
  return pipeline;
}

namespace {

void AddSimplification(passes::HloPassPipeline& pipeline) {
  passes::HloPassPipeline* p = &pipeline;
  p->Add<passes::CallInliner>();
  p->Add<passes::LibraryDefuser>();
  p->Add<passes::MapInliner>();
  p->Add<passes::ScatterExpander>();
  p->Add<passes::BatchNormExpander>();
  passes::HloPassPipeline* simplify = p->AddFixedPoint("simplification");
  simplify->Add<passes::AlgebraicSimplifier>();
  simplify->Add<passes::ConstantFolding>();
  simplify->Add<passes::TupleSimplifier>();
  simplify->Add<passes::WhileLoopSimplifier>();
  simplify->Add<passes::Dce>();
  simplify->Add<passes::Cse>();
  // After algsimp split variadic reduces of independent operands.
  p->Add<passes::ReduceExpander>();
}

}  // namespace

std::unique_ptr<passes::HloPassPipeline> SimplificationPipeline() {
  auto p = std::make_unique<passes::HloPassPipeline>("simplify");
  AddSimplification(*p);
  return p;
}

std::unique_ptr<passes::HloPassPipeline> DefaultPipeline() {
  auto p = std::make_unique<passes::HloPassPipeline>("default");
  AddSimplification(*p);
  p->Add<passes::LayoutAssignment>();
  p->Add<passes::LayoutNormalization>();
  p->Add<passes::AlgebraicSimplifier>();
  p->Add<passes::Dce>();
  p->Add<passes::Cse>();
  p->Add<passes::DotChainFusion>();
  p->Add<passes::PriorityFusion>();
  p->Add<passes::MultiOutputFusion>();
  p->Add<passes::Cse>();
  p->Add<passes::CopyInsertion>();
  p->Add<passes::FlattenCallGraph>();
  p->Add<schedule::MemorySchedulerPass>();
  p->Add<schedule::LatencyHidingSchedulerPass>();
  return p;
}

}  // namespace uir::pipeline
