// The extension module uir._core: binds each area in dependency order.
#include "python/bindings.h"
#include "runtime/builtin_targets.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "uir's C++ core. Private: use the `uir` package.";
  m.attr("__version__") = UIR_VERSION;
  // The runtime's custom-call targets, before anything can look one up.
  uir::runtime::RegisterBuiltinTargets();
  uir::python::BindSupport(m);
  uir::python::BindHlo(m);
  uir::python::BindEval(m);
  uir::python::BindPasses(m);
  uir::python::BindBuffers(m);
  uir::python::BindIGraph(m);
  uir::python::BindRuntime(m);
  uir::python::BindCodegen(m);
  uir::python::BindDistributed(m);
}
