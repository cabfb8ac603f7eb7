// flatten-call-graph: every computation run in sequence (a while's
// condition and body, a conditional's branches, a call's callee, an
// async-start's wrapped computation) is run from exactly one place,
// cloning it for each further caller. Liveness and buffer assignment give
// each such computation one span of the program's timeline, so they need
// this. Fused and applied computations (fusion, reduce, map, ...) are left
// shared. May run anywhere; the scheduler runs it first.
#ifndef UIR_PASSES_FLATTEN_CALL_GRAPH_H_
#define UIR_PASSES_FLATTEN_CALL_GRAPH_H_

#include "passes/pass.h"

namespace uir::passes {

class FlattenCallGraph : public HloPass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_FLATTEN_CALL_GRAPH_H_
