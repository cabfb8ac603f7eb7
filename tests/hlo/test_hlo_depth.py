"""Nesting at any depth ends in a result or a clear error, never a crash,
and memory stays bounded. Each case runs in a child process, so a stack
overflow would fail the test instead of the suite; its peak memory is
printed (pytest -s) and bounded."""

from __future__ import annotations

import subprocess
import sys

import pytest

N = 100_000

CHILD = r"""
import resource, sys
import numpy as np
import uir
kind, n = sys.argv[1], int(sys.argv[2])
nest = lambda k: "(" * k + "f32[]" + ")" * k
if kind == "tuple shape":
    text = "ENTRY e { ROOT p = %s parameter(0) }" % nest(n)
elif kind == "literal braces":
    text = "ENTRY e { ROOT c = f32[%s] constant(%s1%s) }" % (",".join(["1"] * n), "{" * n, "}" * n)
elif kind == "operand parentheses":
    text = "ENTRY e { x = f32[] parameter(0)  ROOT r = f32[] " + "negate(" * n + "x" + ")" * n + " }"
elif kind == "nested fusions":
    comps = ["c0 { p = f32[] parameter(0) ROOT r = f32[] negate(p) }"]
    comps += ["c%d { p = f32[] parameter(0) ROOT f = f32[] fusion(p), kind=kLoop, calls=c%d }" % (i, i - 1)
              for i in range(1, n)]
    comps.append("ENTRY e { x = f32[] parameter(0) ROOT f = f32[] fusion(x), kind=kLoop, calls=c%d }" % (n - 1))
    text = "\n".join(comps)
elif kind == "tuple parameter read by get-tuple-element":
    lines = ["ENTRY e { p = %s parameter(0)" % nest(n)]
    lines += ["g%d = get-tuple-element(%s), index=0" % (i, "p" if i == 0 else "g%d" % (i - 1)) for i in range(n)]
    lines.append("ROOT r = f32[] negate(g%d) }" % (n - 1))
    text = "\n".join(lines)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    m = uir.hlo.parse_module(text)
    m.verify()
    arg = np.float32(1)
    if kind.startswith("tuple"):
        for _ in range(n):
            arg = (arg,)
    result = "result %s" % uir.evaluate(m, arg)
except (uir.ParseError, uir.VerifyError) as e:
    result = type(e).__name__ + ": " + str(e).splitlines()[0][:120]
peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(result)
print("peak-growth-MB %.0f" % peak)
"""

KINDS = [
    ("tuple shape", "ParseError", "nest deeper than 128"),
    ("literal braces", "ParseError", "nesting deeper than 256"),
    ("operand parentheses", "ParseError", "nesting deeper than 256"),
    ("nested fusions", "VerifyError", "the limit is 256"),
    ("tuple parameter read by get-tuple-element", "ParseError", "nest deeper than 128"),
]


@pytest.mark.parametrize("kind,error,phrase", KINDS, ids=[k[0] for k in KINDS])
def test_deep_nesting_gives_a_clear_error_with_bounded_memory(kind, error, phrase):
    run = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(N)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    result, peak = run.stdout.strip().splitlines()
    print(f"{kind} at depth {N}: {result}; {peak}")
    assert result.startswith(error) and phrase in result, result
    assert float(peak.split()[1]) < 512


@pytest.mark.parametrize("kind", ["nested fusions", "tuple parameter read by get-tuple-element"])
def test_nesting_at_the_documented_limit_evaluates(kind):
    depth = 256 if kind == "nested fusions" else 127
    run = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(depth)], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("result"), run.stdout
