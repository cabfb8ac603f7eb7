// HloModule: computations (callees before callers), the entry, and the
// module-level configuration the text header carries.
#ifndef UIR_HLO_MODULE_H_
#define UIR_HLO_MODULE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/computation.h"

namespace uir::hlo {

// input_output_alias entry: {output_index}: (parameter, {parameter_index}, kind).
struct InputOutputAlias {
  std::vector<int64_t> output_index;
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};

struct BufferDonor {
  int64_t parameter = 0;
  std::vector<int64_t> parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

// JAX's stack-frame tables (FileNames, FunctionNames, FileLocations, StackFrames).
struct StackFrameIndex {
  struct FileLocation {
    int64_t file_name_id = 0, function_name_id = 0, line = 0, end_line = 0, column = 0,
            end_column = 0;
    bool operator==(const FileLocation&) const = default;
  };
  struct Frame {
    int64_t file_location_id = 0, parent_frame_id = 0;
    bool operator==(const Frame&) const = default;
  };
  std::vector<std::string> file_names;      // id = index + 1
  std::vector<std::string> function_names;  // id = index + 1
  std::vector<FileLocation> file_locations;
  std::vector<Frame> stack_frames;
  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
  bool operator==(const StackFrameIndex&) const = default;
};

struct ModuleConfig {
  bool is_scheduled = false;
  std::optional<std::vector<Shape>> entry_parameter_layouts;  // entry_computation_layout
  std::optional<Shape> entry_result_layout;
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donors;
  std::optional<bool> alias_passthrough_params;
  std::optional<std::vector<bool>> spmd_to_parameters;  // allow_spmd_..._to_parameters
  std::optional<std::vector<bool>> spmd_to_output;      // allow_spmd_..._to_output
  bool spmd_to_parameters_is_list = false;
  bool spmd_to_output_is_list = false;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  FrontendAttributes frontend_attributes;
  StackFrameIndex stack_frames;
  bool operator==(const ModuleConfig&) const = default;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Takes ownership; computations must be added callees first.
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  HloComputation* FindComputation(std::string_view name) const;

  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }

  const ModuleConfig& config() const { return config_; }
  ModuleConfig& mutable_config() { return config_; }

  // A deep copy (same names, same order).
  std::unique_ptr<HloModule> Clone() const;

  // Structural equality: same header configuration, and computations equal
  // position by position: names, instruction order, opcodes, shapes with
  // layouts, operands, attributes (called computations by name), literals.
  bool Equals(const HloModule& other) const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  ModuleConfig config_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_MODULE_H_
