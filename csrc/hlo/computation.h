// HloComputation: a graph of instructions with parameters and one root.
#ifndef UIR_HLO_COMPUTATION_H_
#define UIR_HLO_COMPUTATION_H_

#include <memory>
#include <string>
#include <vector>

#include "hlo/instruction.h"

namespace uir::hlo {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }

  // Takes ownership; the instruction joins the end of the instruction order.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);

  // Instructions in the order they were added (for parsed text: text order,
  // which is a valid topological order, and the schedule when the module is
  // scheduled).
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
  // Post order: every instruction after its operands and control predecessors.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }
  // Parameters indexed by parameter number (the vector may have holes,
  // nullptr, until the computation is complete; the verifier checks it).
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }
  HloInstruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }

  // Instruction by name, or nullptr.
  HloInstruction* FindInstruction(std::string_view name) const;

  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  // The computation's signature "(p0: f32[2], p1: s32[]) -> f32[2]".
  std::string SignatureString(bool print_layout = true) const;

 private:
  friend class HloModule;
  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  std::string execution_thread_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_COMPUTATION_H_
