// Building HLO programmatically, with shapes inferred as the verifier would.
#ifndef UIR_HLO_BUILDER_H_
#define UIR_HLO_BUILDER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/module.h"

namespace uir::hlo {

// Builds one computation, or adds instructions to an existing one (the way
// a pass creates instructions: shapes inferred and checked, names unique in
// the module). Names are made unique ("add", "add.1", ...). Errors are
// ShapeError for operands that do not fit an opcode, naming the opcode and
// shapes.
class ComputationBuilder {
 public:
  // A new computation, returned by Build().
  explicit ComputationBuilder(std::string name);
  // Adds to `computation` (which must outlive the builder); Build() is not
  // available.
  explicit ComputationBuilder(HloComputation* computation);

  HloInstruction* Parameter(int64_t number, Shape shape, std::string name = "");
  HloInstruction* Constant(Literal literal, std::string name = "");
  // Any opcode. The shape is inferred unless given; for opcodes whose shape
  // cannot be inferred (reshape, convert, broadcast, iota, custom-call, ...)
  // it must be given. A given shape must agree with the inferred one.
  HloInstruction* Add(HloOpcode opcode, const std::vector<HloInstruction*>& operands,
                      AttributeMap attrs = {}, std::optional<Shape> shape = std::nullopt,
                      std::string name = "");

  // Conveniences for the common ops.
  HloInstruction* Unary(HloOpcode opcode, HloInstruction* x);
  HloInstruction* Binary(HloOpcode opcode, HloInstruction* x, HloInstruction* y);
  HloInstruction* Compare(HloInstruction* x, HloInstruction* y, ComparisonDirection direction);
  HloInstruction* Broadcast(HloInstruction* x, std::vector<int64_t> dims,
                            std::vector<int64_t> broadcast_dimensions);
  HloInstruction* Reshape(HloInstruction* x, std::vector<int64_t> dims);
  HloInstruction* Convert(HloInstruction* x, PrimitiveType type);
  HloInstruction* Tuple(const std::vector<HloInstruction*>& elements);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);

  // Finishes the computation; `root` defaults to the last instruction.
  std::unique_ptr<HloComputation> Build(HloInstruction* root = nullptr);

 private:
  std::string UniqueName(const std::string& base);
  HloInstruction* Append(std::unique_ptr<HloInstruction> inst);
  std::unique_ptr<HloComputation> computation_;  // owned until Build()
  HloComputation* target_;
};

// The literal of a scalar `value` of `type`.
Literal ScalarLiteral(PrimitiveType type, double value);

}  // namespace uir::hlo

#endif  // UIR_HLO_BUILDER_H_
