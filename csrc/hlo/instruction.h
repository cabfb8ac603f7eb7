// HloInstruction: one node of a computation's dataflow graph.
#ifndef UIR_HLO_INSTRUCTION_H_
#define UIR_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
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
  // Renames the instruction; inside a computation the name lookup follows.
  // The name is taken as given: use HloComputation::UniqueName for a fresh one.
  void set_name(std::string name);
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  HloComputation* parent() const { return parent_; }
  // Unique within the module (within the computation until it joins one);
  // the key for ordering and maps, never the pointer value. -1 when detached.
  int64_t unique_id() const { return unique_id_; }
  // True once HloComputation::RemoveInstruction took it out; the object stays
  // alive (so pointers held by a pass stay comparable) until Cleanup().
  bool is_removed() const { return removed_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  // Users, each once, in a deterministic order (the order they were added
  // until a user is removed).
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }
  bool IsUserOf(const HloInstruction* operand) const;
  void AppendOperand(HloInstruction* operand);
  // Drops operand i (later operands move down), keeping use lists right.
  void RemoveOperand(int64_t i);
  // Replaces operand i, keeping use lists right.
  void ReplaceOperand(int64_t i, HloInstruction* operand);
  // Every use of `old_operand` by this instruction becomes `new_operand`.
  void ReplaceUsesOfOperand(HloInstruction* old_operand, HloInstruction* new_operand);
  // Every use of this instruction (and the computation's root, if it is it)
  // becomes `replacement`. The shapes must be compatible (layouts aside):
  // anything else is an InternalError. O(users + their operand counts).
  void ReplaceAllUsesWith(HloInstruction* replacement);
  // The same without the shape check, for rewrites that fix shapes after.
  void ReplaceAllUsesWithDifferentShape(HloInstruction* replacement);
  // Drops all operands (updating their use lists).
  void DetachOperands();

  const std::vector<HloInstruction*>& control_predecessors() const { return control_preds_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_succs_; }
  void AddControlDependencyTo(HloInstruction* successor);
  void RemoveControlDependencyTo(HloInstruction* successor);
  // Drops this instruction's control edges, first linking each predecessor to
  // each successor so the order they imposed is kept.
  void DropControlDependenciesKeepingOrder();

  const AttributeMap& attributes() const { return attrs_; }
  AttributeMap& mutable_attributes() { return attrs_; }

  // Side-effecting (opcode.def's column; a custom-call flagged
  // custom_call_has_side_effect), or calls a computation that holds such an
  // instruction. Passes never remove, merge or duplicate these.
  bool HasSideEffect() const;

  // The computations this instruction calls, in attribute-table order
  // (condition before body, branches in order, ...).
  std::vector<HloComputation*> called_computations() const;

  // parameter: its number. constant: its literal.
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }
  const Literal& literal() const { return *literal_; }
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(Literal literal) { literal_ = std::make_unique<Literal>(std::move(literal)); }

  // A detached copy with other operands (and shape): attributes, literal,
  // parameter number and name are copied (the name gets `suffix`, if any,
  // and is made unique when the copy joins a computation); control edges are
  // not.
  std::unique_ptr<HloInstruction> CloneWithNewOperands(const Shape& shape,
                                                       const std::vector<HloInstruction*>& operands,
                                                       const std::string& suffix = "") const;

  // Same opcode, shape (layouts included), operands (the same instructions),
  // literal, parameter number and attributes other than metadata; called
  // computations compare by identity, or structurally with
  // `compare_computations`. Names and control edges are ignored.
  // With `any_operand_order` (for commutative ops), the two operands may
  // also match crosswise.
  bool Identical(const HloInstruction& other, bool compare_computations = false,
                 bool any_operand_order = false) const;
  // Hash consistent with Identical (operands by unique id; with
  // `any_operand_order`, in sorted order).
  size_t Hash(bool any_operand_order = false) const;

  // Async ops: the computation async-start calls (async-update/done find it
  // through their operand chain), and the instruction it wraps (its root).
  HloComputation* async_wrapped_computation() const;
  HloInstruction* async_wrapped_instruction() const;
  // For async-update/done: the async-start at the head of the chain.
  const HloInstruction* async_chain_start() const;

 private:
  friend class HloComputation;
  friend class HloModule;
  void AddUser(HloInstruction* user);
  void RemoveUser(HloInstruction* user);

  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  // Position of each user in users_, built once an instruction has many
  // users, so adding and removing a user stays O(1).
  std::unique_ptr<std::unordered_map<const HloInstruction*, size_t>> user_index_;
  std::vector<HloInstruction*> control_preds_;
  std::vector<HloInstruction*> control_succs_;
  AttributeMap attrs_;
  int64_t parameter_number_ = -1;
  std::unique_ptr<Literal> literal_;
  int64_t unique_id_ = -1;
  int64_t index_in_parent_ = -1;  // slot in the parent's instruction list
  bool removed_ = false;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_INSTRUCTION_H_
