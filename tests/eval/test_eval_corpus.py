"""Every `core` and `extended` module of XLA's corpus, run by `uir run` on
random inputs suited to each parameter (as many replicas as its collectives
need): it evaluates and prints a summary of each output, or (while the
evaluator is incomplete) it stops with UnimplementedError naming the missing
op. Nothing else is allowed: no crash, no other error."""

from __future__ import annotations

import contextlib
import io

import pytest
from corpus import CORPUS, TOO_HEAVY, XLA_REJECTS, manifest_rows, needs_corpus

from uir._tools import cli

# A corpus walk: slow (the sanitizer run leaves it to make test).
pytestmark = [needs_corpus, pytest.mark.slow]

ROWS = manifest_rows()
MODULES = sorted(r["file"] for r in ROWS if r["cpu_class"] in ("core", "extended"))

# Modules known to evaluate today; the count can only go up.
MIN_EVALUATED = 136


def uir_run(name: str) -> tuple[int, str, str]:
    """`uir run CORPUS/name`, in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["run", "--backend", "eval", str(CORPUS / name)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def outcomes() -> dict[str, str]:
    """Each module's outcome, computed once: "ok", or the error uir run printed."""
    results = {}
    for name in MODULES:
        if name in TOO_HEAVY:
            continue
        code, out, err = uir_run(name)
        if code == 0:
            # A line for the module, then one summary line per output.
            lines = out.splitlines()
            assert " evaluated" in lines[0] and len(lines) >= 2, out
            assert all(
                (": " in line and "first=[" in line) or "no outputs" in line for line in lines[1:]
            ), out
            results[name] = "ok"
        else:
            results[name] = err.strip().removeprefix("uir: ")
    return results


@pytest.mark.parametrize("name", [m for m in MODULES if m not in TOO_HEAVY])
def test_corpus_module_evaluates_or_names_what_is_missing(name, outcomes):
    outcome = outcomes[name]
    if name in XLA_REJECTS:
        # uir.evaluate verifies first, and XLA rejects these modules too.
        assert outcome.startswith("VerifyError"), outcome
    elif outcome != "ok":
        assert outcome.startswith("UnimplementedError"), outcome
        assert "not support" in outcome or "reinterpret" in outcome


def test_at_least_this_many_corpus_modules_evaluate(outcomes):
    evaluated = sum(1 for o in outcomes.values() if o == "ok")
    assert evaluated >= MIN_EVALUATED, evaluated
