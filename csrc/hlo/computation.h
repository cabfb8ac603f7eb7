// HloComputation: a graph of instructions with parameters and one root.
#ifndef UIR_HLO_COMPUTATION_H_
#define UIR_HLO_COMPUTATION_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hlo/instruction.h"

namespace uir::hlo {

class HloModule;

// The live instructions of a computation in insertion order (removed ones
// skipped), as HloInstruction*. Invalidated by adding instructions.
class InstructionRange {
 public:
  using Slots = std::vector<std::unique_ptr<HloInstruction>>;
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = HloInstruction*;
    using difference_type = std::ptrdiff_t;
    using pointer = HloInstruction* const*;
    using reference = HloInstruction*;
    Iterator() = default;
    Iterator(const Slots* slots, size_t i) : slots_(slots), i_(i) { Skip(); }
    HloInstruction* operator*() const { return (*slots_)[i_].get(); }
    Iterator& operator++() {
      ++i_;
      Skip();
      return *this;
    }
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& other) const { return i_ == other.i_; }

   private:
    void Skip() {
      while (i_ < slots_->size() && (*slots_)[i_] == nullptr) ++i_;
    }
    const Slots* slots_ = nullptr;
    size_t i_ = 0;
  };
  explicit InstructionRange(const Slots* slots) : slots_(slots) {}
  Iterator begin() const { return Iterator(slots_, 0); }
  Iterator end() const { return Iterator(slots_, slots_->size()); }

 private:
  const Slots* slots_;
};

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  HloModule* parent() const { return parent_; }
  // Unique within the module; -1 until the computation joins one.
  int64_t unique_id() const { return unique_id_; }

  // Takes ownership; the instruction joins the end of the insertion order
  // (which need not be topological: every walk orders by the graph). Its
  // name is kept as given: call UniqueName for a fresh one. A parameter is
  // registered under its number.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instruction);
  // A name no instruction of the module (or of this computation while it is
  // detached) has: `base`, else `base.N` with the smallest free N.
  std::string UniqueName(const std::string& base);

  // Removes an instruction that has no users and is not the root; it is
  // detached from its operands, its control edges are dropped (predecessors
  // linked to successors) and it is kept alive, marked removed, until
  // Cleanup(). Parameters cannot be removed. Anything else is an
  // InternalError. O(1) amortized.
  void RemoveInstruction(HloInstruction* instruction);
  // Removes `instruction` and then each operand that is left without users
  // (transitively), except parameters, the root and side-effecting ones.
  void RemoveInstructionAndUnusedOperands(HloInstruction* instruction);
  // Removes parameter `number`, which must have no users; later parameters
  // are renumbered down by one (the caller fixes the callers' operands).
  void RemoveParameter(int64_t number);
  // Replaces every use of `old_instruction` with `new_instruction` (shapes
  // must be compatible), gives the replacement the old one's metadata if it
  // has none, then removes the old one and operands it leaves unused.
  void ReplaceInstruction(HloInstruction* old_instruction, HloInstruction* new_instruction);
  // Frees removed instructions and compacts the insertion order.
  void Cleanup();

  // Live instructions in insertion order (for parsed text: text order).
  InstructionRange instructions() const { return InstructionRange(&instructions_); }
  int64_t instruction_count() const { return live_count_; }
  // Post order: every instruction after its operands and control
  // predecessors, and otherwise in insertion order (so a topologically
  // inserted computation comes back in insertion order).
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;

  HloInstruction* root() const { return root_; }
  void set_root(HloInstruction* root) { root_ = root; }
  // Parameters indexed by parameter number (the vector may have holes,
  // nullptr, until the computation is complete; the verifier checks it).
  const std::vector<HloInstruction*>& parameters() const { return parameters_; }
  HloInstruction* parameter(int64_t i) const { return parameters_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(parameters_.size()); }

  // Instruction by name, or nullptr. O(1).
  HloInstruction* FindInstruction(std::string_view name) const;

  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string thread) { execution_thread_ = std::move(thread); }

  // The computation's signature "(p0: f32[2], p1: s32[]) -> f32[2]".
  std::string SignatureString(bool print_layout = true) const;

 private:
  friend class HloModule;
  friend class HloInstruction;
  void Rename(HloInstruction* instruction, std::string name);
  void Register(HloInstruction* instruction);
  void FreeRemoved();
  // Marks `instruction` removed (kept alive until Cleanup) and drops its
  // control edges and name; operands are the caller's business.
  void Retire(HloInstruction* instruction);
  // Closes the holes removed instructions left in the insertion order.
  void Compact();

  std::string name_;
  HloModule* parent_ = nullptr;
  int64_t unique_id_ = -1;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;  // nullptr: removed
  std::vector<std::unique_ptr<HloInstruction>> removed_;       // freed by Cleanup
  int64_t live_count_ = 0;
  int64_t next_local_id_ = 0;  // ids while detached
  // Keys view the instructions' own names (kept in step by Rename and Retire).
  absl::flat_hash_map<std::string_view, HloInstruction*> by_name_;
  std::vector<HloInstruction*> parameters_;
  HloInstruction* root_ = nullptr;
  std::string execution_thread_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_COMPUTATION_H_
