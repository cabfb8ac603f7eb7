// What may fuse with what, and what a fusion costs: the rules and the cost
// model priority-fusion and multi-output-fusion decide with, and that
// explain_fusion reports. Nothing here edits the module.
//
// Three kinds of fusion, as XLA names them:
//  - kLoop: elementwise work (with broadcasts, reshapes, slices, ... that
//    only index differently), one output element per loop iteration.
//  - kInput: holds reductions. A single reduction at the root takes any
//    elementwise work before it. More reductions, or a reduction whose
//    result is used inside the fusion, make a *row fusion*: every reduction
//    reduces the same minor dimensions of the same shape F = [outer..., row...]
//    (a row), and whatever reads a reduction's result stays within the row
//    it came from: elementwise ops on rows or on row results, reshapes that
//    only add or drop size-1 dimensions, and broadcasts of a row result back
//    along its row. A kernel then computes one row at a time in fast memory,
//    and softmax or layer norm read their input from memory once. The rows
//    a fusion keeps live must fit MachineModel::fast_memory_bytes.
//  - kOutput: one dot or convolution (a library call reading its operands
//    from memory) followed by an elementwise epilogue of its shape.
#ifndef UIR_PASSES_FUSION_FUSION_ANALYSIS_H_
#define UIR_PASSES_FUSION_FUSION_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "hlo/module.h"
#include "support/machine.h"

namespace uir::passes::fusion {

// The most distinct inputs a fusion may read (a kernel's argument list).
inline constexpr size_t kMaxFusionInputs = 64;

// An op that may be part of a fusion (as producer or consumer): elementwise
// ops, index-only ops (broadcast, reshape, bitcast, transpose, copy, slice,
// dynamic-slice, concatenate, pad, reverse, iota), scalar constants,
// reduce, dot, convolution, and fusions with a single output. Never
// anything with a side effect, control edges or a non-array result.
bool IsFusible(const hlo::HloInstruction& instruction);

// The fused computation of a fusion instruction.
hlo::HloComputation* FusedComputation(const hlo::HloInstruction& fusion);

// Estimated flops of one instruction (a fusion: of its whole computation).
double InstructionFlops(const hlo::HloInstruction& instruction);
int64_t ShapeBytes(const hlo::Shape& shape);

// What the cost model needs of a fusion, present or prospective: kept per
// instruction so that judging a merge costs O(inputs), not O(fusion size).
struct FusionSummary {
  double flops = 0;
  std::vector<const hlo::HloInstruction*> inputs;  // distinct outside operands, in order
  // The bytes read of each input: all of it, or, where only slices of it
  // are read, their bytes (at most all of it).
  std::vector<int64_t> input_read;
  int64_t input_bytes = 0;  // input_read, summed
  int64_t output_bytes = 0;
  int reductions = 0;
  int library_ops = 0;  // dot, convolution
  bool root_is_reduction = false;

  static FusionSummary Of(const hlo::HloInstruction& instruction);
  // `producer` fused into `consumer`.
  static FusionSummary Merge(const hlo::HloInstruction& producer, const FusionSummary& p,
                             const FusionSummary& c);
  // Adds `input` to `inputs`, read `read` bytes of it (-1: all of it); an
  // input there already is read more (up to all of it).
  void AddInput(const hlo::HloInstruction* input, int64_t read = -1);
  // Adds the operands of `fusion` as its fused computation reads them.
  void AddFusionInputs(const hlo::HloInstruction& fusion);
  // Empties `inputs`.
  void ClearInputs();
  // Input k is read `read` bytes more (up to all of it).
  void ReadMore(size_t k, int64_t read);
  int64_t BytesRead() const { return input_bytes; }
  int64_t BytesAccessed() const { return BytesRead() + output_bytes; }
  // Roofline estimate of running it as one kernel on all cores.
  double Seconds(const MachineModel& machine) const;
  // kLoop, kInput (a reduction) or kOutput (a dot or convolution).
  hlo::FusionKind Kind() const;
};

// The instructions of a fusion as it would be after merging `producer` into
// `consumer` (either may be a plain instruction or a fusion); no IR is built.
class FusionView {
 public:
  explicit FusionView(const hlo::HloInstruction* single);
  FusionView(const hlo::HloInstruction* producer, const hlo::HloInstruction* consumer);

  // The computing instructions (no parameters), operands before users.
  const std::vector<const hlo::HloInstruction*>& nodes() const { return nodes_; }
  const hlo::HloInstruction* root() const { return root_; }
  // The node that computes operand i of `node`, or nullptr when the operand
  // is read from outside the fusion.
  const hlo::HloInstruction* Internal(const hlo::HloInstruction* node, int64_t i) const;

  // Empty if the fusion follows the rules above, else why not (one line).
  std::string Check(const MachineModel& machine) const;

 private:
  void AddBody(const hlo::HloInstruction* instruction);
  std::string CheckLibraryEpilogue() const;
  std::string CheckRows(const MachineModel& machine) const;

  std::vector<const hlo::HloInstruction*> nodes_;
  std::unordered_set<const hlo::HloInstruction*> node_set_;
  std::unordered_map<const hlo::HloInstruction*, const hlo::HloInstruction*> outer_of_param_;
  const hlo::HloInstruction* producer_ = nullptr;
  const hlo::HloInstruction* producer_root_ = nullptr;
  const hlo::HloInstruction* root_ = nullptr;
};

}  // namespace uir::passes::fusion

#endif  // UIR_PASSES_FUSION_FUSION_ANALYSIS_H_
