// priority-fusion: producer-consumer fusion ordered by benefit.
//
// Every fusible producer gets a priority: the time its kernel and its
// consumers' kernels take apart, minus the time of the consumers with the
// producer fused in (MachineModel's roofline: bytes over bandwidth against
// flops over peak, plus a launch cost per kernel). Duplicating a producer
// into several consumers costs its flops once per consumer, so cheap
// producers (broadcasts, converts, adds) are duplicated and expensive ones
// stay shared unless the bytes saved pay for the repeated work. The
// producer with the highest priority fuses into *all* its consumers (a
// partial fusion would keep it alive and save nothing); then the priorities
// around it are brought up to date. A negative priority, a consumer that
// cannot take it, or a merged fusion that breaks the rules of
// fusion_analysis.h stops a producer, with the reason recorded.
// Reductions and dots are never duplicated. Fusing a producer into all its
// users and removing it can never form a cycle.
//
// Runs on the entry and the bodies of control flow (while, conditional,
// call); reducers, fused and async computations are left alone.
#ifndef UIR_PASSES_FUSION_PRIORITY_FUSION_H_
#define UIR_PASSES_FUSION_PRIORITY_FUSION_H_

#include <string>
#include <vector>

#include "passes/pass.h"
#include "support/machine.h"

namespace uir::passes {

// One fusion decision, for explain_fusion.
struct FusionDecision {
  std::string computation;
  std::string producer;                // its name when the decision was taken
  std::string producer_op;             // opcode, or "fusion(kInput)" ...
  std::vector<std::string> consumers;  // names when the decision was taken
  bool fused = false;
  std::string result;  // the fusion the producer went into (the first one)
  std::string kind;    // its kind afterwards
  std::string rule;    // why
  double bytes_saved = 0;
  double flops_duplicated = 0;
  double seconds_unfused = 0;
  double seconds_fused = 0;
};

class PriorityFusion : public HloPass {
 public:
  explicit PriorityFusion(MachineModel machine = MachineModel::Host()) : machine_(machine) {}
  std::string_view name() const override { return "priority-fusion"; }
  bool Run(hlo::HloModule& module) override;

  const MachineModel& machine() const { return machine_; }
  // The decisions of the last Run: every fusion done, in order, then every
  // fusible producer left unfused with its last reason.
  const std::vector<FusionDecision>& decisions() const { return decisions_; }

 private:
  bool RunOnComputation(hlo::HloComputation& computation);
  MachineModel machine_;
  std::vector<FusionDecision> decisions_;
};

// The computations fusion passes work on: the entry and, transitively, the
// computations of while, conditional and call.
std::vector<hlo::HloComputation*> FusionTargets(const hlo::HloModule& module);

}  // namespace uir::passes

#endif  // UIR_PASSES_FUSION_PRIORITY_FUSION_H_
