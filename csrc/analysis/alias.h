// Alias analysis: HloBuffers, the sets of HloValues that must share
// storage. A phi shares with its inputs (a loop's state, a conditional's
// result), an in-place op's result with the operand it updates
// (in_place.h), and an entry output with the parameter input_output_alias
// names. Everything else gets a buffer of its own; whether two buffers may
// share bytes over time is buffer assignment's decision.
#ifndef UIR_ANALYSIS_ALIAS_H_
#define UIR_ANALYSIS_ALIAS_H_

#include <memory>
#include <string>
#include <vector>

#include "analysis/dataflow.h"

namespace uir::analysis {

class HloBuffer {
 public:
  int64_t id() const { return id_; }
  // Sorted by value id.
  const std::vector<const HloValue*>& values() const { return values_; }
  // The largest of its values.
  int64_t bytes() const { return bytes_; }
  // Holds an entry parameter's value, a constant, or a live-out value.
  bool has_entry_parameter() const;
  bool has_constant() const;
  bool live_out() const;
  std::string ToString() const;

 private:
  friend class HloAliasAnalysis;
  int64_t id_ = 0;
  int64_t bytes_ = 0;
  std::vector<const HloValue*> values_;
};

class HloAliasAnalysis {
 public:
  static std::unique_ptr<HloAliasAnalysis> Run(const hlo::HloModule& module);

  const HloDataflowAnalysis& dataflow() const { return *dataflow_; }
  const std::vector<HloBuffer>& buffers() const { return buffers_; }
  const HloBuffer& BufferOf(const HloValue& value) const {
    return buffers_[buffer_of_[value.id()]];
  }
  const HloBuffer& BufferAt(const hlo::HloInstruction* i, const ShapeIndex& index) const {
    return BufferOf(dataflow_->ValueAt(i, index));
  }
  std::string ToString() const;

 private:
  std::unique_ptr<HloDataflowAnalysis> dataflow_;
  std::vector<HloBuffer> buffers_;
  std::vector<int64_t> buffer_of_;  // value id -> buffer id
};

}  // namespace uir::analysis

#endif  // UIR_ANALYSIS_ALIAS_H_
