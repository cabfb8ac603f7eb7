// Shape inference: the shape each opcode produces from its operands and
// attributes. Used by the parser (for omitted shapes), the verifier and the builder.
#ifndef UIR_HLO_SHAPE_INFERENCE_H_
#define UIR_HLO_SHAPE_INFERENCE_H_

#include <optional>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace uir::hlo {

// The result shape (without layout) of `opcode` applied to operands of
// `operand_shapes` with `attrs`, or nullopt for opcodes whose shape must be
// written out (parameter, constant, reshape, convert, custom-call, ...).
// Throws ShapeError when the operands or attributes do not fit the opcode;
// the message names the opcode and the shapes.
std::optional<Shape> InferShape(HloOpcode opcode, const std::vector<const Shape*>& operand_shapes,
                                const AttributeMap& attrs);

}  // namespace uir::hlo

#endif  // UIR_HLO_SHAPE_INFERENCE_H_
