// The pass registry (every pass of passes/ and schedule/ by name) and the
// default pipeline: the room that assembles the stages below it.
#ifndef UIR_PIPELINE_REGISTRY_H_
#define UIR_PIPELINE_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "passes/pipeline.h"

namespace uir::pipeline {

// Every registered pass name, sorted.
std::vector<std::string> AvailablePasses();
// A new instance of the pass `name`; an unknown name is a
// std::invalid_argument that lists the available ones.
std::unique_ptr<passes::HloPass> CreatePass(const std::string& name);
// A pipeline of the named passes, in order.
std::unique_ptr<passes::HloPassPipeline> MakePipeline(const std::vector<std::string>& names);
// The default optimization pipeline (DESIGN.md's data flow, front half):
// call inlining, the simplification fixed point, layouts (assigned,
// normalized, cleaned up), fusion, then copy insertion.
std::unique_ptr<passes::HloPassPipeline> DefaultPipeline();
// The default pipeline's passes before fusion.
std::unique_ptr<passes::HloPassPipeline> SimplificationPipeline();

}  // namespace uir::pipeline

#endif  // UIR_PIPELINE_REGISTRY_H_
