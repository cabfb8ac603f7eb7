// HloPassPipeline: passes in order, fixed-point sub-pipelines, per-pass
// verification, timing and an observer hook for checks, traces and dumps.
#ifndef UIR_PASSES_PIPELINE_H_
#define UIR_PASSES_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace uir::passes {

// What the pipeline reports after each pass it runs.
struct PassRecord {
  std::string name;      // the pass's name
  std::string pipeline;  // the enclosing (sub-)pipeline's name
  int iteration = 0;     // fixed-point iteration (0 outside fixed points)
  bool changed = false;
  double seconds = 0;
  int64_t instruction_count = 0;  // after the pass, all computations
};

struct PipelineOptions {
  // Run the verifier after every pass that changed the module; a failure
  // is an InternalError naming the pass.
  bool verify = true;
  // Compare fingerprints around every pass: a pass that reports "unchanged"
  // but changed the module is an InternalError naming it.
  bool check_unchanged = true;
  // Called after every pass (changed or not) with its record and the module.
  std::function<void(const PassRecord&, const hlo::HloModule&)> observer;
};

class HloPassPipeline : public HloPass {
 public:
  explicit HloPassPipeline(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  // Appends a pass; returns it.
  HloPass* AddPass(std::unique_ptr<HloPass> pass);
  template <typename T, typename... Args>
  T* Add(Args&&... args) {
    return static_cast<T*>(AddPass(std::make_unique<T>(std::forward<Args>(args)...)));
  }
  // Appends a sub-pipeline run until it changes nothing (at most
  // `max_iterations` times); returns it for filling.
  HloPassPipeline* AddFixedPoint(std::string name, int max_iterations = 25);

  // The passes in order (a sub-pipeline counts as one).
  const std::vector<std::unique_ptr<HloPass>>& passes() const { return passes_; }
  // Every leaf pass name in running order (fixed points once).
  std::vector<std::string> LeafNames() const;

  bool Run(hlo::HloModule& module) override { return Run(module, PipelineOptions{}); }
  // With options.verify, the module is verified first: a module that does
  // not verify is the caller's error (VerifyError naming the instruction),
  // not a pass's.
  bool Run(hlo::HloModule& module, const PipelineOptions& options);

 private:
  bool RunPasses(hlo::HloModule& module, const PipelineOptions& options);
  bool RunOnce(hlo::HloModule& module, const PipelineOptions& options, int iteration);
  std::string name_;
  std::vector<std::unique_ptr<HloPass>> passes_;
  int max_iterations_ = 1;  // > 1: a fixed point
};

}  // namespace uir::passes

#endif  // UIR_PASSES_PIPELINE_H_
