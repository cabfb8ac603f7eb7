// map-inliner: replaces each `map` whose computation is scalar elementwise
// arithmetic by the same arithmetic on whole arrays.
//
// map(a, b), to_apply={p0, p1 -> add(p0, mul(p1, 2))} becomes
// add(a, mul(b, broadcast(2))): parameters become the map's operands,
// scalar constants become broadcasts to the map's shape, and each
// elementwise op is cloned at the map's dimensions (its own element type).
// A map whose computation holds anything else (a nested map, a reduce, a
// call, an op with side effects) is left alone. Run early, before fusion,
// so the inlined ops fuse with their neighbours.
#ifndef UIR_PASSES_MAP_INLINER_H_
#define UIR_PASSES_MAP_INLINER_H_

#include "passes/pass.h"

namespace uir::passes {

class MapInliner : public HloPass {
 public:
  std::string_view name() const override { return "map-inliner"; }
  bool Run(hlo::HloModule& module) override;
};

}  // namespace uir::passes

#endif  // UIR_PASSES_MAP_INLINER_H_
