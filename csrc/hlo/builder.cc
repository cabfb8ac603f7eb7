// ComputationBuilder: appends instructions with inferred shapes.
#include "hlo/builder.h"

#include "hlo/opcode_attributes.h"
#include "hlo/shape_inference.h"
#include "support/error.h"

namespace uir::hlo {

ComputationBuilder::ComputationBuilder(std::string name)
    : computation_(std::make_unique<HloComputation>(std::move(name))),
      target_(computation_.get()) {}

ComputationBuilder::ComputationBuilder(HloComputation* computation) : target_(computation) {
  UIR_CHECK(computation != nullptr) << "ComputationBuilder on a null computation";
}

std::string ComputationBuilder::UniqueName(const std::string& base) {
  UIR_CHECK(target_ != nullptr) << "ComputationBuilder used after Build()";
  return target_->UniqueName(base);
}

HloInstruction* ComputationBuilder::Append(std::unique_ptr<HloInstruction> inst) {
  UIR_CHECK(target_ != nullptr) << "ComputationBuilder used after Build()";
  inst->mutable_shape().FillMissingLayouts();
  return target_->AddInstruction(std::move(inst));
}

HloInstruction* ComputationBuilder::Parameter(int64_t number, Shape shape, std::string name) {
  if (number < 0)
    throw ShapeError("parameter number must be non-negative, got " + std::to_string(number));
  UIR_CHECK(target_ != nullptr) << "ComputationBuilder used after Build()";
  if (number < target_->num_parameters() && target_->parameter(number) != nullptr) {
    throw ShapeError("parameter(" + std::to_string(number) + ") is already defined");
  }
  auto inst = std::make_unique<HloInstruction>(
      HloOpcode::kParameter, std::move(shape),
      UniqueName(name.empty() ? "p" + std::to_string(number) : name));
  inst->set_parameter_number(number);
  return Append(std::move(inst));
}

HloInstruction* ComputationBuilder::Constant(Literal literal, std::string name) {
  Shape shape = literal.shape();
  auto inst = std::make_unique<HloInstruction>(HloOpcode::kConstant, shape,
                                               UniqueName(name.empty() ? "constant" : name));
  shape.FillMissingLayouts();
  literal.set_shape_layouts_from(shape);
  inst->set_literal(std::move(literal));
  return Append(std::move(inst));
}

HloInstruction* ComputationBuilder::Add(HloOpcode opcode,
                                        const std::vector<HloInstruction*>& operands,
                                        AttributeMap attrs, std::optional<Shape> shape,
                                        std::string name) {
  if (opcode == HloOpcode::kParameter || opcode == HloOpcode::kConstant) {
    throw ShapeError("use Parameter() or Constant() for " + std::string(OpcodeName(opcode)));
  }
  for (const auto& [key, value] : attrs.entries()) {
    if (!AttributeAllowed(opcode, key)) {
      throw ShapeError("attribute '" + std::string(AttrName(key)) + "' is not valid on " +
                       std::string(OpcodeName(opcode)));
    }
  }
  std::vector<const Shape*> operand_shapes;
  for (HloInstruction* o : operands) {
    UIR_CHECK(o != nullptr) << "null operand for " << OpcodeName(opcode);
    if (o->parent() != target_) {
      throw ShapeError(std::string(OpcodeName(opcode)) + ": operand %" + o->name() +
                       " belongs to another computation");
    }
    operand_shapes.push_back(&o->shape());
  }
  std::optional<Shape> inferred = InferShape(opcode, operand_shapes, attrs);
  if (!shape) {
    if (!inferred) throw ShapeError(std::string(OpcodeName(opcode)) + " needs an explicit shape");
    shape = std::move(inferred);
  } else if (inferred && !inferred->Compatible(*shape) &&
             !((opcode == HloOpcode::kDot || opcode == HloOpcode::kConvolution) &&
               inferred->dimensions() == shape->dimensions())) {
    throw ShapeError(std::string(OpcodeName(opcode)) + ": shape " + shape->Describe() +
                     " differs from the inferred " + inferred->Describe());
  }
  auto inst = std::make_unique<HloInstruction>(
      opcode, std::move(*shape), UniqueName(name.empty() ? std::string(OpcodeName(opcode)) : name));
  for (HloInstruction* o : operands) inst->AppendOperand(o);
  inst->mutable_attributes() = std::move(attrs);
  return Append(std::move(inst));
}

HloInstruction* ComputationBuilder::Unary(HloOpcode opcode, HloInstruction* x) {
  return Add(opcode, {x});
}

HloInstruction* ComputationBuilder::Binary(HloOpcode opcode, HloInstruction* x, HloInstruction* y) {
  return Add(opcode, {x, y});
}

HloInstruction* ComputationBuilder::Compare(HloInstruction* x, HloInstruction* y,
                                            ComparisonDirection direction) {
  AttributeMap attrs;
  attrs.SetEnum(AttrKey::kDirection, direction);
  return Add(HloOpcode::kCompare, {x, y}, std::move(attrs));
}

HloInstruction* ComputationBuilder::Broadcast(HloInstruction* x, std::vector<int64_t> dims,
                                              std::vector<int64_t> broadcast_dimensions) {
  if (!x->shape().IsArray()) throw ShapeError("broadcast needs an array operand");
  if (static_cast<int64_t>(broadcast_dimensions.size()) != x->shape().rank()) {
    throw ShapeError("broadcast of " + x->shape().Describe() +
                     " needs one dimension per operand dimension");
  }
  for (size_t i = 0; i < broadcast_dimensions.size(); ++i) {
    int64_t d = broadcast_dimensions[i];
    const int64_t n = x->shape().dimensions(static_cast<int64_t>(i));
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || (dims[d] != n && n != 1)) {
      throw ShapeError("broadcast of " + x->shape().Describe() + ": dimension " +
                       std::to_string(i) + " does not map onto the output");
    }
  }
  AttributeMap attrs;
  attrs.Set(AttrKey::kDimensions, std::move(broadcast_dimensions));
  return Add(HloOpcode::kBroadcast, {x}, std::move(attrs),
             Shape(x->shape().element_type(), std::move(dims)));
}

HloInstruction* ComputationBuilder::Reshape(HloInstruction* x, std::vector<int64_t> dims) {
  Shape out(x->shape().element_type(), std::move(dims));
  if (out.element_count() != x->shape().element_count()) {
    throw ShapeError("reshape of " + x->shape().Describe() + " to " + out.Describe() +
                     " changes the element count");
  }
  return Add(HloOpcode::kReshape, {x}, {}, std::move(out));
}

HloInstruction* ComputationBuilder::Convert(HloInstruction* x, PrimitiveType type) {
  Shape out = x->shape();
  out.set_element_type(type);
  out.clear_layout();
  return Add(HloOpcode::kConvert, {x}, {}, std::move(out));
}

HloInstruction* ComputationBuilder::Tuple(const std::vector<HloInstruction*>& elements) {
  return Add(HloOpcode::kTuple, elements);
}

HloInstruction* ComputationBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  AttributeMap attrs;
  attrs.Set(AttrKey::kIndex, index);
  return Add(HloOpcode::kGetTupleElement, {tuple}, std::move(attrs));
}

std::unique_ptr<HloComputation> ComputationBuilder::Build(HloInstruction* root) {
  UIR_CHECK(computation_ != nullptr)
      << "ComputationBuilder::Build called twice, or on a builder for an existing computation";
  if (computation_->instruction_count() == 0)
    throw ShapeError("computation " + computation_->name() + " is empty");
  if (root != nullptr && root->parent() != computation_.get()) {
    throw ShapeError("the root %" + root->name() + " belongs to another computation");
  }
  for (int64_t i = 0; i < computation_->num_parameters(); ++i) {
    if (computation_->parameter(i) == nullptr) {
      throw ShapeError("computation " + computation_->name() + " has no parameter(" +
                       std::to_string(i) + ")");
    }
  }
  HloInstruction* last = nullptr;
  for (HloInstruction* i : computation_->instructions()) last = i;
  computation_->set_root(root ? root : last);
  target_ = nullptr;
  return std::move(computation_);
}

Literal ScalarLiteral(PrimitiveType type, double value) {
  Literal l(Shape(type, {}));
  l.SetDouble(0, value);
  return l;
}

}  // namespace uir::hlo
