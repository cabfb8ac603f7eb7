// The pass interface: a named transformation of an HloModule.
#ifndef UIR_PASSES_PASS_H_
#define UIR_PASSES_PASS_H_

#include <string_view>

#include "hlo/module.h"

namespace uir::passes {

// A pass rewrites a module in place and says whether it changed anything.
// Contract: Run returns false only if the module is exactly as it was (the
// pipeline checks this with the module fingerprint when asked); the result
// must verify and compute what the input computed (checked against the
// evaluator by `check`). A pass may leave removed instructions behind: the
// pipeline calls HloModule::Cleanup after it.
class HloPass {
 public:
  virtual ~HloPass() = default;
  // The one name used by the registry, dumps, the CLI and Python.
  virtual std::string_view name() const = 0;
  virtual bool Run(hlo::HloModule& module) = 0;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_PASS_H_
