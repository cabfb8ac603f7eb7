// HloInstruction: one node of a computation's dataflow graph.
#ifndef UIR_HLO_INSTRUCTION_H_
#define UIR_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/attributes.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"
#include "hlo/shape.h"

namespace uir::hlo {

class HloComputation;

class HloInstruction {
 public:
  // Instructions are created through HloComputation::AddInstruction.
  HloInstruction(HloOpcode opcode, Shape shape, std::string name);
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  HloComputation* parent() const { return parent_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  // Users in the order they were added; each user appears once.
  const std::vector<HloInstruction*>& users() const { return users_; }
  void AppendOperand(HloInstruction* operand);
  // Replaces operand i, keeping use lists right.
  void ReplaceOperand(int64_t i, HloInstruction* operand);

  const std::vector<HloInstruction*>& control_predecessors() const { return control_preds_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_succs_; }
  void AddControlDependencyTo(HloInstruction* successor);

  const AttributeMap& attributes() const { return attrs_; }
  AttributeMap& mutable_attributes() { return attrs_; }

  // The computations this instruction calls, in attribute-table order
  // (condition before body, branches in order, ...).
  std::vector<HloComputation*> called_computations() const;

  // parameter: its number. constant: its literal.
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  const Literal& literal() const { return *literal_; }
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(Literal literal) { literal_ = std::make_unique<Literal>(std::move(literal)); }

  // Async ops: the computation async-start calls (async-update/done find it
  // through their operand chain), and the instruction it wraps (its root).
  HloComputation* async_wrapped_computation() const;
  HloInstruction* async_wrapped_instruction() const;
  // For async-update/done: the async-start at the head of the chain.
  const HloInstruction* async_chain_start() const;

 private:
  friend class HloComputation;
  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_preds_;
  std::vector<HloInstruction*> control_succs_;
  AttributeMap attrs_;
  int64_t parameter_number_ = -1;
  std::unique_ptr<Literal> literal_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_INSTRUCTION_H_
