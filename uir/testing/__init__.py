"""uir.testing: assertions for experiments written as pytest files, and
Hypothesis strategies (uir.testing.strategies).

- assert_matches_evaluator(f_or_module, *args, backends=("cpu",)): the
  compiled results equal the reference evaluator's.
- assert_passes_preserve(module, passes=None): every changing pass keeps
  what the module computes (checked on random inputs).
- assert_fusion(f_or_module, *args, kernels=N): the program runs as N fused
  kernels.

The pytest plugin (uir.testing.pytest_plugin, registered as `uir`) adds the
`uir_backend` fixture (a test once per backend), `uir_report` (the HTML
report of a failing test's compile) and `--uir-dump=DIR`."""

from uir._src.tools.testing import assert_fusion, assert_matches_evaluator, assert_passes_preserve

__all__ = ["assert_fusion", "assert_matches_evaluator", "assert_passes_preserve"]
