// Dataflow analysis: the HloValues of a module, where each appears
// (positions) and what reads it (uses).
//
// A value is one array or tuple table an instruction defines at one shape
// index; tuple elements are values of their own. Instructions that pass
// values through define nothing there: get-tuple-element, bitcast, tuple
// (it defines only its table at {}), domain, add-dependency,
// optimization-barrier, call (its result is the callee's root), copy-done,
// async-update and async-done, and the done half of collectives. A while
// and a conditional define a *phi* value at every index: the loop state or
// the chosen branch's result. Its inputs (the loop's initial state and the
// body's result; each branch's result) must share its storage; the body's
// and condition's parameters hold the while's phi values.
//
// Sequential computations are analysed: the entry and what while,
// conditional, call and async-start run. Fused and applied computations
// (fusion, reduce, map, sort, ...) are parts of one kernel: their insides
// have no values here. Each analysed computation must be called from one
// place (the flatten-call-graph pass makes it so).
//
// Every position holds exactly one value: merges happen only through phis.
#ifndef UIR_ANALYSIS_DATAFLOW_H_
#define UIR_ANALYSIS_DATAFLOW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/shape_index.h"
#include "hlo/module.h"

namespace uir::analysis {

struct HloPosition {
  hlo::HloInstruction* instruction = nullptr;
  ShapeIndex index;
  std::string ToString() const;
};

struct HloUse {
  hlo::HloInstruction* instruction = nullptr;  // the reader
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  std::string ToString() const;
};

class HloValue {
 public:
  HloValue(int64_t id, hlo::HloInstruction* instruction, ShapeIndex index, bool is_phi);

  int64_t id() const { return id_; }
  hlo::HloInstruction* instruction() const { return instruction_; }  // defining
  const ShapeIndex& index() const { return index_; }
  bool is_phi() const { return is_phi_; }
  const hlo::Shape& shape() const;
  int64_t bytes() const;
  // Where the value appears; the defining position first.
  const std::vector<HloPosition>& positions() const { return positions_; }
  const std::vector<HloUse>& uses() const { return uses_; }
  // For a phi: the values that flow into it.
  const std::vector<HloValue*>& phi_inputs() const { return phi_inputs_; }
  // Appears in the entry computation's result.
  bool live_out() const { return live_out_; }
  // "%name", "%name{1,0}"; phis end in " (phi)".
  std::string ToShortString() const;

 private:
  friend class HloDataflowAnalysis;
  int64_t id_;
  hlo::HloInstruction* instruction_;
  ShapeIndex index_;
  bool is_phi_;
  bool live_out_ = false;
  std::vector<HloPosition> positions_;
  std::vector<HloUse> uses_;
  std::vector<HloValue*> phi_inputs_;
};

// The value at each index of one instruction's result, in pre-order of the
// shape (a tuple before its elements).
class InstructionValueSet {
 public:
  explicit InstructionValueSet(const hlo::Shape& shape);
  HloValue* at(const ShapeIndex& index) const { return values_[Node(index)]; }
  void set(const ShapeIndex& index, HloValue* value) { values_[Node(index)] = value; }
  const std::vector<ShapeIndex>& indices() const { return indices_; }
  const std::vector<HloValue*>& values() const { return values_; }  // parallel to indices()
  // Copies `source`'s values under `prefix` (the subtree at `prefix` of this
  // set must have source's shape).
  void CopyFrom(const InstructionValueSet& source, const ShapeIndex& from, const ShapeIndex& to);

 private:
  size_t Node(const ShapeIndex& index) const;
  std::vector<ShapeIndex> indices_;
  std::vector<HloValue*> values_;
  std::vector<std::vector<int32_t>> children_;  // node -> child nodes
};

class HloDataflowAnalysis {
 public:
  // Throws InternalError if an analysed computation is called from more
  // than one place.
  static std::unique_ptr<HloDataflowAnalysis> Run(const hlo::HloModule& module);

  const hlo::HloModule& module() const { return module_; }
  const std::vector<std::unique_ptr<HloValue>>& values() const { return values_; }
  const HloValue& value(int64_t id) const { return *values_[id]; }
  const InstructionValueSet& value_set(const hlo::HloInstruction* instruction) const;
  const HloValue& ValueAt(const hlo::HloInstruction* instruction, const ShapeIndex& index) const {
    return *value_set(instruction).at(index);
  }
  bool Defines(const hlo::HloInstruction* instruction, const ShapeIndex& index) const;

  // The sequential computations in caller-before-callee order, entry first.
  const std::vector<const hlo::HloComputation*>& computations() const { return computations_; }
  bool IsAnalysed(const hlo::HloComputation* computation) const;
  // The instruction that runs `computation` (nullptr for the entry).
  const hlo::HloInstruction* Caller(const hlo::HloComputation* computation) const;
  // Computations an instruction runs in sequence: a while's condition and
  // body, a conditional's branches, a call's callee, an async-start's
  // wrapped computation.
  static std::vector<hlo::HloComputation*> SequentialCallees(const hlo::HloInstruction& i);

  std::string ToString() const;

 private:
  explicit HloDataflowAnalysis(const hlo::HloModule& module) : module_(module) {}
  HloValue* Define(hlo::HloInstruction* instruction, const ShapeIndex& index, bool is_phi);
  InstructionValueSet& Set(const hlo::HloInstruction* instruction);
  void Visit(const hlo::HloComputation* computation, const hlo::HloInstruction* caller);
  void DefineAll(hlo::HloInstruction* instruction, bool is_phi);
  void Propagate(hlo::HloInstruction* instruction);
  void ComputePositionsAndUses();

  const hlo::HloModule& module_;
  std::vector<std::unique_ptr<HloValue>> values_;
  absl::flat_hash_map<const hlo::HloInstruction*, std::unique_ptr<InstructionValueSet>> sets_;
  std::vector<const hlo::HloComputation*> computations_;
  absl::flat_hash_map<const hlo::HloComputation*, const hlo::HloInstruction*> caller_;
};

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_DATAFLOW_H_
