// The CPU runtime's library as the rest of the compiler asks of it: which
// lone ops and dots the Kernel Graph's lowering may make library calls
// (CpuLibrary, from the planners of library_plans.cc and dot_plans.cc), and
// what of a node a host thunk leaves to the evaluator (EvaluatorWork).
#include <algorithm>
#include <string>

#include "codegen/collective_plans.h"
#include "codegen/library_plans.h"
#include "hlo/collective_groups.h"

namespace uir::codegen {

using hlo::HloInstruction;
using hlo::HloOpcode;
using igraph::KernelNode;

std::string EvaluatorWork(const KernelNode& n, const buffers::BufferAssignment& ba) {
  const HloInstruction* inst = n.instruction;
  const std::string op =
      inst != nullptr ? std::string(hlo::OpcodeName(inst->opcode())) : std::string(n.op);
  if (n.chain != nullptr || igraph::NothingToRun(n)) return "";
  if (!n.igraphs.empty()) {
    if (n.library == nullptr) return "";  // its iGraphs (ones the emitter refused are listed apart)
    const HloInstruction& lib = *n.library;
    if (GemmOf(n) || DotOf(n) || ConvOf(n)) return "";  // a thunk of its own
    return std::string(hlo::OpcodeName(lib.opcode())) + " before its epilogue";
  }
  if (n.kind == igraph::NodeKind::kControlFlow && inst != nullptr) {
    if (inst->opcode() == HloOpcode::kWhile         ? igraph::InPlaceWhile(n, ba).has_value()
        : inst->opcode() == HloOpcode::kConditional ? igraph::InPlaceBranches(n, ba).has_value()
                                                    : igraph::InPlaceCall(n, ba) != nullptr) {
      return "";
    }
    return op + " whose state is not in place";
  }
  if (n.kind == igraph::NodeKind::kCustomCall) {
    return igraph::CustomCallFrameOf(n) ? "" : "custom-call with a buffer not in row-major order";
  }
  if (n.kind == igraph::NodeKind::kFallback)
    return n.reason.empty() ? op + " on the evaluator" : n.reason;
  if (inst != nullptr &&
      (n.kind == igraph::NodeKind::kCollective ||
       (n.kind == igraph::NodeKind::kAsync && inst->opcode() == HloOpcode::kAsyncStart))) {
    const hlo::HloModule& module = *inst->parent()->parent();
    std::string refused;
    int64_t ids = 0;
    if (CollectiveOf(n, hlo::RequiredParticipants(module),
                     static_cast<int>(std::max<int64_t>(1, module.config().num_partitions)), &ids,
                     &refused)) {
      return "";
    }
    if (n.kind == igraph::NodeKind::kCollective) return op + " on the evaluator (" + refused + ")";
  }
  if (n.kind == igraph::NodeKind::kLibrary &&
      (ArgReduceOf(n) || WindowOf(n) || SortOf(n) || TopKOf(n) || GatherOf(n) || ScatterOf(n) ||
       FftOf(n) || RngBitsOf(n) || RngOf(n))) {
    return "";
  }
  if (n.kind == igraph::NodeKind::kCopy && inst != nullptr) return "";
  if (inst != nullptr && inst->opcode() == HloOpcode::kDot && (GemmOf(n) || DotOf(n))) return "";
  return op + " on the evaluator" + (n.reason.empty() ? "" : " (" + n.reason + ")");
}

namespace {

class CpuLibraryKernels final : public igraph::LibraryKernels {
 public:
  bool Runs(const KernelNode& n) const override {
    if (n.instruction == nullptr) return false;
    switch (n.instruction->opcode()) {
      case HloOpcode::kGather:
        return GatherOf(n).has_value();
      case HloOpcode::kScatter:
        return ScatterOf(n).has_value();
      case HloOpcode::kReduce:
        return ArgReduceOf(n).has_value();
      case HloOpcode::kReduceWindow:
        return WindowOf(n).has_value();
      case HloOpcode::kFft:
        return FftOf(n).has_value();
      case HloOpcode::kRngBitGenerator:
        return RngBitsOf(n).has_value();
      case HloOpcode::kRng:
        return RngOf(n).has_value();
      case HloOpcode::kTopK:
        return TopKOf(n).has_value();
      default:
        return false;
    }
  }
  bool RunsGemm(const HloInstruction& dot, const igraph::DramTensor& lhs,
                const igraph::DramTensor& rhs, const igraph::DramTensor& out) const override {
    runtime::GemmPlan plan;
    return PlanGemm(dot, lhs, rhs, out, &plan);
  }
};

}  // namespace

const igraph::LibraryKernels& CpuLibrary() {
  static const CpuLibraryKernels library;
  return library;
}

}  // namespace uir::codegen
