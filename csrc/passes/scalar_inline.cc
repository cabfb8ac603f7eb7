#include "passes/scalar_inline.h"

#include <unordered_map>

#include "hlo/builder.h"

namespace uir::passes {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsScalarElementwise(const HloComputation& f, bool tuple_root) {
  for (const HloInstruction* i : f.instructions()) {
    if (tuple_root && i == f.root() && i->opcode() == HloOpcode::kTuple) continue;
    if (!i->shape().IsArray() || i->shape().rank() != 0) return false;
    if (i->HasSideEffect() || !i->called_computations().empty()) return false;
    const HloOpcode op = i->opcode();
    if (op != HloOpcode::kParameter && op != HloOpcode::kConstant && !hlo::IsElementwise(op)) {
      return false;
    }
  }
  return true;
}

std::vector<HloInstruction*> InlineScalar(const HloComputation& f,
                                          const std::vector<HloInstruction*>& args,
                                          const hlo::Shape& like, HloComputation* caller) {
  hlo::ComputationBuilder b(caller);
  auto at_dims = [&](PrimitiveType type) {
    hlo::Shape s = like;
    s.set_element_type(type);
    s.FillMissingLayouts();
    return s;
  };
  std::unordered_map<const HloInstruction*, HloInstruction*> values;
  std::vector<HloInstruction*> out;
  for (HloInstruction* i : f.MakeInstructionPostOrder()) {
    if (i == f.root() && i->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* o : i->operands()) out.push_back(values.at(o));
      return out;
    }
    if (i->opcode() == HloOpcode::kParameter) {
      values[i] = args.at(static_cast<size_t>(i->parameter_number()));
    } else if (i->opcode() == HloOpcode::kConstant) {
      HloInstruction* scalar = b.Constant(i->literal(), i->name());
      HloInstruction* splat = b.Broadcast(scalar, like.dimensions(), {});
      splat->mutable_shape() = at_dims(i->shape().element_type());
      values[i] = splat;
    } else {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : i->operands()) operands.push_back(values.at(o));
      auto clone = i->CloneWithNewOperands(at_dims(i->shape().element_type()), operands);
      clone->set_name(caller->UniqueName(i->name()));
      values[i] = caller->AddInstruction(std::move(clone));
    }
  }
  out.push_back(values.at(f.root()));
  return out;
}

}  // namespace uir::passes
