// HloModule: computations, the entry, the schedule, and the module-level
// configuration the text header carries.
#ifndef UIR_HLO_MODULE_H_
#define UIR_HLO_MODULE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "hlo/computation.h"
#include "hlo/schedule.h"

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

  // Takes ownership, in any order: walks order computations by the call
  // graph. Instructions get module-wide ids; their names are registered with
  // the module's name uniquer as they are (not renamed).
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  // Computations in insertion order.
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  // Callees before callers, otherwise insertion order.
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  HloComputation* FindComputation(std::string_view name) const;
  // Removes a computation no instruction of the module calls (InternalError
  // otherwise) and is not the entry.
  void RemoveComputation(HloComputation* computation);
  // Removes every computation not reachable from the entry. Returns how many.
  int64_t RemoveUnreachableComputations();
  // Deep-copies `computation` and everything it calls into this module under
  // fresh names; returns the copy. `computation` may belong to another module.
  HloComputation* CloneComputationInto(const HloComputation& computation,
                                       const std::string& suffix = "clone");
  // Frees removed instructions in every computation and brings the schedule
  // (if any) up to date.
  void Cleanup();

  // Fresh names: `base` (minus a ".N" suffix) or `base.N`, never a name any
  // instruction (resp. computation) of the module has had.
  std::string UniqueInstructionName(const std::string& base);
  std::string UniqueComputationName(const std::string& base);
  int64_t NextUniqueId() { return next_unique_id_++; }

  // The schedule of an is_scheduled module: a sequence per computation.
  bool has_schedule() const { return schedule_.has_value(); }
  const HloSchedule& schedule() const { return *schedule_; }
  HloSchedule& mutable_schedule() { return *schedule_; }
  void set_schedule(HloSchedule schedule);
  void clear_schedule();

  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }

  const ModuleConfig& config() const { return config_; }
  ModuleConfig& mutable_config() { return config_; }

  // A deep copy (same names, same order, same schedule).
  std::unique_ptr<HloModule> Clone() const;

  // Structural equality: same header configuration, and computations equal
  // position by position (call-graph post order, instruction post order):
  // names, opcodes, shapes with layouts, operands, attributes (called
  // computations by name), literals.
  bool Equals(const HloModule& other) const;

  // A hash of the module's structure that ignores instruction and
  // computation names and metadata: equal for modules that compute the
  // same way however they are named; a pass that changes it changed the
  // module.
  uint64_t Fingerprint() const;

 private:
  friend class HloComputation;
  void RegisterInstructionName(const std::string& name);
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  ModuleConfig config_;
  std::optional<HloSchedule> schedule_;
  int64_t next_unique_id_ = 0;
  // Flat tables: a module can hold 10^5 names, and node-based sets spend
  // their time in the allocator and in cache misses.
  absl::flat_hash_set<std::string> instruction_names_;
  absl::flat_hash_map<std::string, int64_t> next_instruction_suffix_;
  absl::flat_hash_set<std::string> computation_names_;
  absl::flat_hash_map<std::string, int64_t> next_computation_suffix_;
};

}  // namespace uir::hlo

#endif  // UIR_HLO_MODULE_H_
