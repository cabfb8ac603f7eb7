// HloPassPipeline: runs passes, verifies, checks "unchanged", reports.
#include "passes/pipeline.h"

#include <chrono>

#include "hlo/verifier.h"
#include "support/error.h"

namespace uir::passes {
namespace {

int64_t InstructionCount(const hlo::HloModule& module) {
  int64_t n = 0;
  for (const auto& c : module.computations()) n += c->instruction_count();
  return n;
}

}  // namespace

HloPass* HloPassPipeline::AddPass(std::unique_ptr<HloPass> pass) {
  passes_.push_back(std::move(pass));
  return passes_.back().get();
}

HloPassPipeline* HloPassPipeline::AddFixedPoint(std::string name, int max_iterations) {
  auto sub = std::make_unique<HloPassPipeline>(std::move(name));
  sub->max_iterations_ = max_iterations;
  return static_cast<HloPassPipeline*>(AddPass(std::move(sub)));
}

std::vector<std::string> HloPassPipeline::LeafNames() const {
  std::vector<std::string> out;
  for (const auto& p : passes_) {
    if (const auto* sub = dynamic_cast<const HloPassPipeline*>(p.get())) {
      for (std::string& n : sub->LeafNames()) out.push_back(std::move(n));
    } else {
      out.emplace_back(p->name());
    }
  }
  return out;
}

bool HloPassPipeline::Run(hlo::HloModule& module, const PipelineOptions& options) {
  if (options.verify) hlo::Verify(module);
  return RunPasses(module, options);
}

bool HloPassPipeline::RunPasses(hlo::HloModule& module, const PipelineOptions& options) {
  bool changed = false;
  for (int i = 0; i < max_iterations_; ++i) {
    if (!RunOnce(module, options, max_iterations_ > 1 ? i + 1 : 0)) break;
    changed = true;
  }
  return changed;
}

bool HloPassPipeline::RunOnce(hlo::HloModule& module, const PipelineOptions& options,
                              int iteration) {
  bool changed = false;
  for (const auto& pass : passes_) {
    if (auto* sub = dynamic_cast<HloPassPipeline*>(pass.get())) {
      changed |= sub->RunPasses(module, options);
      continue;
    }
    const uint64_t before = options.check_unchanged ? module.Fingerprint() : 0;
    const auto start = std::chrono::steady_clock::now();
    const bool pass_changed = pass->Run(module);
    module.Cleanup();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.check_unchanged && !pass_changed && module.Fingerprint() != before) {
      throw InternalError("pass '" + std::string(pass->name()) +
                          "' reported no change but changed the module");
    }
    if (options.verify && pass_changed) {
      try {
        hlo::Verify(module);
      } catch (const UserError& e) {
        throw InternalError("after pass '" + std::string(pass->name()) +
                            "' the module does not verify: " + e.what());
      }
    }
    changed |= pass_changed;
    if (options.observer) {
      PassRecord record{std::string(pass->name()), name_, iteration, pass_changed, seconds,
                        InstructionCount(module)};
      options.observer(record, module);
    }
  }
  return changed;
}

}  // namespace uir::passes
