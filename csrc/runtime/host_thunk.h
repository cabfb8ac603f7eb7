// A host thunk: a function of the run's memory supplied by the layer that
// built the sequence, for work no other thunk does yet (the Kernel Graph
// runs such nodes on the evaluator or its own loops: gather, scatter,
// dynamic windows, dot chains). Its reason is in the text. One that runs
// the reference evaluator is of kind kFallback, so that profiles and
// reports single it out.
#ifndef UIR_RUNTIME_HOST_THUNK_H_
#define UIR_RUNTIME_HOST_THUNK_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/thunk.h"

namespace uir::runtime {

class HostThunk final : public Thunk {
 public:
  using Function = std::function<void(const ExecuteParams&)>;
  // `uses`: every byte of the run's memory `fn` reads or writes;
  // `ordered`: whether it may have other effects (Thunk::ordered);
  // `fallback`: whether `fn` runs the evaluator.
  static std::unique_ptr<HostThunk> Create(std::string name, std::string what, Function fn,
                                           std::vector<BufferUse> uses, bool ordered,
                                           bool fallback = false);

  const std::string& what() const { return what_; }
  void Execute(const ExecuteParams& params) const override { fn_(params); }

 private:
  HostThunk(std::string name, std::string what, Function fn, std::vector<BufferUse> uses,
            bool ordered, bool fallback)
      : Thunk(fallback ? Kind::kFallback : Kind::kHost, std::move(name), std::move(uses), ordered),
        what_(std::move(what)),
        fn_(std::move(fn)) {}
  std::string Details() const override { return "(" + what_ + ")"; }

  std::string what_;
  Function fn_;
};

}  // namespace uir::runtime

#endif  // UIR_RUNTIME_HOST_THUNK_H_
