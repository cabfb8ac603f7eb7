"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

# CI runs must not depend on luck: there Hypothesis derandomizes (examples
# follow from each test's name); local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# UIR_TEST_MAX_EXAMPLES=N caps every property test at N examples. The
# sanitizer run (make asan, at -O0) sets it: it is there to walk the C++
# paths under AddressSanitizer, while `make test` runs the full counts.
_MAX_EXAMPLES = os.environ.get("UIR_TEST_MAX_EXAMPLES")


def pytest_collection_modifyitems(config, items):
    if not _MAX_EXAMPLES:
        return
    if not _MAX_EXAMPLES.isdigit() or int(_MAX_EXAMPLES) < 1:
        raise pytest.UsageError(
            f"UIR_TEST_MAX_EXAMPLES must be a whole number of at least 1, not {_MAX_EXAMPLES!r}"
        )
    cap = int(_MAX_EXAMPLES)
    for item in items:
        test = getattr(item, "obj", None)
        # Where @given keeps the test's settings (as hypothesis.seed does).
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if current is not None and current.max_examples > cap:
            test._hypothesis_internal_use_settings = settings(current, max_examples=cap)


def _run_python(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Runs `code` in a fresh interpreter (for process-wide state: environment
    variables read once, libraries loaded into the process)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="session")
def run_python():
    """The function `run_python(code, env=None)`: runs code in a fresh interpreter."""
    return _run_python


@pytest.fixture(scope="session")
def smoke_kernel():
    from uir import _core

    return _core.codegen.SmokeAddKernel(3)


@pytest.fixture
def jax_x32():
    """The installed jax (the test is skipped without it) with 64-bit types
    off for the test, as uir's are by default: an earlier test in the run may
    have turned JAX's on."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    yield jax
    jax.config.update("jax_enable_x64", before)


# UIR_TEST_GPU_WALK=FILE: every module a test compiles for the CPU is also
# lowered for the GPU model and written as PTX; a line per module goes to
# FILE ("ok NAME KERNELS" or "refused NAME: REASON"). How the tracing
# tests' functions are walked for the GPU target:
#   UIR_TEST_GPU_WALK=/tmp/gpu.txt pytest tests/trace -q -p no:randomly
if os.environ.get("UIR_TEST_GPU_WALK"):
    from uir._src.core import executable as _executable

    _original_compile = _executable.Executable._compile

    def _compile_and_walk(self, module, optimized):
        _original_compile(self, module, optimized)
        if self.backend != "cpu" or self._kernel_graph is None:
            return
        import uir.igraph as ig

        try:
            program = ig.compile_gpu(ig.lower(self.module, "gpu"))
            lines = [f"refused {self.module.name}: {r}" for r in program.refused]
            lines = lines or [f"ok {self.module.name} {len(program.kernels)}"]
        except Exception as e:  # recorded, not raised: a walk
            lines = [f"error {self.module.name}: {type(e).__name__}: {e}"]
        with open(os.environ["UIR_TEST_GPU_WALK"], "a", encoding="utf-8") as f:
            f.write("".join(line.replace("\n", " ") + "\n" for line in lines))

    _executable.Executable._compile = _compile_and_walk
