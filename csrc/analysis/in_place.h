// Which operand buffers an instruction writes in place, and which it may
// share with its result.
//
// Must-alias (the op is defined to update its operand): dynamic-update-slice
// operand 0, scatter's operands (one per output), fusions whose root is one
// of those (into the fused parameter it updates), and custom calls with
// output_to_operand_aliasing. Copy insertion makes these safe; alias
// analysis puts operand and result in one buffer.
//
// May-share (buffer assignment's choice): an elementwise op, or a loop
// fusion that reads a parameter only through elementwise ops of the
// result's shape, may write its result over an operand of the same shape
// and layout whose last use it is. Element i of the result depends only on
// element i of the operand, so reading and writing in step is safe.
#ifndef UIR_ANALYSIS_IN_PLACE_H_
#define UIR_ANALYSIS_IN_PLACE_H_

#include <cstdint>
#include <vector>

#include "analysis/shape_index.h"
#include "hlo/instruction.h"

namespace uir::analysis {

struct InPlacePair {
  ShapeIndex output_index;  // where the result is written
  int64_t operand = 0;      // the operand it is written over
  ShapeIndex operand_index;
};

// The must-alias pairs of `instruction`.
std::vector<InPlacePair> InPlacePairs(const hlo::HloInstruction& instruction);

// Operand numbers `instruction` overwrites in place (InPlacePairs' operands
// with array results at {} or a scatter's {k}).
std::vector<int64_t> InPlaceOperands(const hlo::HloInstruction& instruction);

// True if `user`'s array result may be written over operand `operand`'s
// buffer (the operand's whole value, at index {}), provided it is the
// operand buffer's last use.
bool CanShareOperandBuffer(const hlo::HloInstruction& user, int64_t operand);

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_IN_PLACE_H_
