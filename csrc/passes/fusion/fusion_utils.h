// Building fusions in the IR: wrapping an instruction, fusing a producer in.
#ifndef UIR_PASSES_FUSION_FUSION_UTILS_H_
#define UIR_PASSES_FUSION_FUSION_UTILS_H_

#include <string>
#include <unordered_set>

#include "hlo/module.h"

namespace uir::passes::fusion {

// Replaces `instruction` by a fusion of `kind` whose new computation
// ("fused_computation") computes it from one parameter per distinct operand
// ("param_N"). Returns the fusion.
hlo::HloInstruction* WrapInFusion(hlo::HloInstruction* instruction, hlo::FusionKind kind);

// Clones `producer` (a plain instruction or a fusion, whose computation is
// inlined) into `fusion`'s computation in place of every parameter that
// reads it; the producer's operands become fusion operands (shared with
// existing ones). The producer itself is left as is (the caller removes it
// once nothing uses it). Returns the clone of the producer's result.
// O(producer size + fusion operands).
hlo::HloInstruction* FuseProducerInto(hlo::HloInstruction* fusion, hlo::HloInstruction* producer);

// The other way round, for a fusion `producer` whose only user is
// `consumer`: the consumer's body (a plain instruction or a fusion) joins
// the producer's computation as its new root, the producer takes the
// consumer's shape and place, and the consumer is removed. Returns the
// producer. O(consumer size + fusion operands): the cheaper way when the
// producer's fusion is the bigger one.
hlo::HloInstruction* FuseConsumerIntoProducer(hlo::HloInstruction* producer,
                                              hlo::HloInstruction* consumer);

// Sibling fusion: `b` (a plain instruction or a single-output fusion) joins
// fusion `a` as one more output. `a`'s root becomes (or grows) a tuple,
// `a` takes the tuple shape, and every former reader of `a` and of `b`
// reads its value through a get-tuple-element. `a`, if already
// multi-output, must be read only through get-tuple-element; neither may
// reach the other. Returns `a`.
hlo::HloInstruction* MergeSibling(hlo::HloInstruction* a, hlo::HloInstruction* b);

// Producer-consumer multi-output fusion: `producer` (a single-output
// instruction or fusion) is fused into `fusion` as for FuseProducerInto, and
// its value becomes one more output of `fusion` (as for MergeSibling), which
// the producer's other readers now read. The producer is removed. None of
// those readers may be reached by `fusion`. Returns `fusion`.
hlo::HloInstruction* FuseProducerAsOutput(hlo::HloInstruction* fusion,
                                          hlo::HloInstruction* producer);

// After a fusion grew: identical copies that duplicated producers left
// behind are merged (CSE, then DCE), and parameters are named after their
// numbers (param_N).
void TidyFusedComputation(const hlo::HloInstruction& fusion);

// The computations fusion instructions call.
std::unordered_set<const hlo::HloComputation*> FusedComputations(const hlo::HloModule& module);

// Sets the fusion's kind from what its computation holds (kOutput with a
// dot or convolution, kInput with a reduction, else kLoop).
void UpdateFusionKind(hlo::HloInstruction* fusion);

}  // namespace uir::passes::fusion

#endif  // UIR_PASSES_FUSION_FUSION_UTILS_H_
