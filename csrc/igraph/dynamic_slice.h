// Dynamic slices in the Kernel Graph, with kernels that stay static.
//
// Inside a fusion: a dynamic-slice whose operand is a parameter of the
// fusion, that takes a contiguous block of it (size 1 in the dimensions
// before the first one it cuts, whole dimensions after it), and whose start
// indices are scalar integer expressions of the fusion's scalar parameters
// and constants, becomes a parameter of its own shape: a window into the
// operand's memory, placed on every run at the offset those scalars give
// (XLA's clamping included); other reads of the parameter in the fusion
// read it whole, as before. The fusion is lowered with windows for
// parameters; its iGraphs never see a data-dependent address. (XLA's GPU
// backend runs its dynamic-slice fusions the same way: a thunk shifts the
// buffer addresses an otherwise static kernel gets.)
//
// Alone: dynamic-slice and dynamic-update-slice of row-major arrays are
// copies of a block at clamped start indices, run on the buffers.
#ifndef UIR_IGRAPH_DYNAMIC_SLICE_H_
#define UIR_IGRAPH_DYNAMIC_SLICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/module.h"

namespace uir::igraph {

// One scalar operation of an index program, on values held as int64 and
// wrapped to `type` after every step.
struct IndexStep {
  enum class Kind : uint8_t { kInput, kConstant, kUnary, kBinary, kSelect, kCompare, kClamp };
  Kind kind = Kind::kConstant;
  hlo::HloOpcode opcode = hlo::HloOpcode::kAdd;
  hlo::ComparisonDirection direction = hlo::ComparisonDirection::kEq;
  PrimitiveType type = PrimitiveType::kS64;  // the result's; kCompare: the operands'
  int64_t input = -1;                        // kInput: the node input holding the scalar
  int64_t element = 0;                       // kInput: which element of it
  int64_t constant = 0;                      // kConstant
  std::vector<int> operands;                 // earlier steps
};

// Input `input` of the node is a window of `sizes` into input `source`
// (of `dims`), starting at the values of steps `starts` (one per dim).
struct DynamicWindow {
  int64_t input = 0;
  int64_t source = 0;
  std::vector<int> starts;
  std::vector<int64_t> dims, sizes;
  std::vector<int64_t> strides;  // bytes, row-major
  std::string name;              // the dynamic-slice it replaces
};

// A fusion whose root is a dynamic-update-slice of parameter `source`
// (used nowhere else) is lowered to compute only the update; the node
// writes it into its output at the start indices (`starts` over `dims`,
// the update's `sizes`): straight through a window of the output when the
// block is contiguous, else through a buffer of its own and a block copy.
// Not in place, the operand is copied into the output first.
struct DynamicUpdate {
  int64_t source = 0;
  std::vector<int> starts;
  std::vector<int64_t> dims, sizes;
  std::vector<int64_t> strides;  // bytes, row-major
  bool contiguous = false;
  std::string name;
};

struct DynamicWindows {
  std::vector<IndexStep> steps;
  std::vector<DynamicWindow> windows;
  std::optional<DynamicUpdate> update;
  // The fusion to lower: the original's operands (as parameters of a
  // computation of its own) then one per window, calling the rewritten
  // fused computation. Owned here.
  std::shared_ptr<hlo::HloModule> module;
  const hlo::HloInstruction* fusion = nullptr;
};

// The rewrite of `fusion` (whose operands must all be arrays), or null when
// none of its dynamic-slices qualifies.
std::shared_ptr<const DynamicWindows> WindowDynamicSlices(const hlo::HloInstruction& fusion);

// The memory of node input `input` (the runner's).
using InputMemory = std::function<const uint8_t*(int64_t input)>;

// The byte strides of a row-major array of shape `s`.
std::vector<int64_t> RowMajorByteStrides(const hlo::Shape& s);

// The byte offset of `w` into its source on this run.
int64_t WindowOffset(const DynamicWindows& d, const DynamicWindow& w, const InputMemory& at);
// The byte offset of the update's block in the output on this run.
int64_t UpdateOffset(const DynamicWindows& d, const InputMemory& at);

// Copies the block of `block_dims` at byte offset `offset` of a row-major
// array of `whole_dims` from `whole` into `block` (or back, `into_whole`).
void CopyBlock(const std::vector<int64_t>& whole_dims, const std::vector<int64_t>& block_dims,
               int64_t element_bytes, int64_t offset, uint8_t* whole, uint8_t* block,
               bool into_whole);

// True for a dynamic-slice or dynamic-update-slice RunDynamicCopy can run:
// row-major arrays, scalar start indices.
bool IsDynamicCopy(const hlo::HloInstruction& inst);

// Such an instruction, described once: the block copied at start indices
// read on each run.
struct DynamicCopyPlan {
  bool update = false;                // dynamic-update-slice
  std::vector<int64_t> whole, block;  // the operand's and the block's dims
  int64_t element_bytes = 0;
  std::vector<PrimitiveType> index_types;  // one start index per dimension
};
DynamicCopyPlan PlanDynamicCopy(const hlo::HloInstruction& inst);

// Runs it: `in` holds the operands' memory in order (operand, update for an
// update, then the start indices), `out` the result's. An update whose
// result is not its operand's memory copies the operand first.
void RunDynamicCopy(const DynamicCopyPlan& plan, const std::vector<const uint8_t*>& in,
                    uint8_t* out);

}  // namespace uir::igraph

#endif  // UIR_IGRAPH_DYNAMIC_SLICE_H_
