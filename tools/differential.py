"""What the differential tools share (fuzz_compile.py, xla_walk.py): a
worker process that runs one case per line of JSON, so a crash or a hang
ends the case and not the run, and the comparison of two results (bit for
bit for integers and booleans, within a tolerance for floats, NaN where
NaN)."""

from __future__ import annotations

import json
import selectors
import subprocess
import sys


def elements(shape) -> int:
    if shape.is_tuple:
        return sum(elements(s) for s in shape.tuple_shapes)
    n = 1
    for d in shape.dims:
        n *= max(d, 0)
    return n


def leaves(value):
    if isinstance(value, tuple):
        for v in value:
            yield from leaves(v)
    else:
        yield value


def agree(got, want) -> str | None:
    """None when the results agree, else where they differ first."""
    import ml_dtypes
    import numpy as np

    from uir._src.core.dtypes import is_float

    got, want = list(leaves(got)), list(leaves(want))
    if len(got) != len(want):
        return f"{len(got)} results, the evaluator has {len(want)}"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {k}: {g.dtype}{list(g.shape)}, the evaluator's {w.dtype}{list(w.shape)}"
        if w.dtype.kind == "c" or is_float(w.dtype):
            wide = np.complex128 if w.dtype.kind == "c" else np.float64
            g64, w64 = g.astype(wide), w.astype(wide)
            finite = np.isfinite(w64)
            scale = float(np.max(np.abs(w64[finite]))) if finite.any() else 1.0
            # Narrow floats round every partial sum: their tolerance grows
            # with their epsilon (16 of them: 0.016 for f16, 0.125 for bf16).
            eps = float(ml_dtypes.finfo(w.dtype).eps) if w.dtype.kind != "c" else 0.0
            rtol = max(2e-3, 16 * eps)
            atol = max(1e-4, 16 * eps) * max(1.0, scale)
            ok = np.isclose(g64, w64, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = np.asarray(g == w)
        if not np.all(ok):
            if ok.ndim == 0 or g.size == 0:
                return f"result {k}: {g!r} against {w!r}"
            index = tuple(int(i) for i in np.argwhere(~ok)[0])
            return f"result {k}, element {list(index)}: {g[index]!r}, the evaluator's {w[index]!r}"
    return None


def serve(run_case) -> None:
    """The worker's loop: a case (a JSON object) per line on stdin, its
    result (another) per line on stdout. An exception is a result too."""
    for line in sys.stdin:
        case = json.loads(line)
        try:
            result = run_case(case)
        except Exception as e:  # any other exception is a finding
            result = {"outcome": "internal", "detail": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


class Worker:
    """A worker process running `argv` (a script that calls serve)."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def run(self, case: dict, timeout: float) -> dict:
        """The case's result; {"outcome": "timeout"} (the process killed)
        past `timeout` seconds, {"outcome": "death"} when it died."""
        self.proc.stdin.write(json.dumps(case) + "\n")
        self.proc.stdin.flush()
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ready = sel.select(timeout)
        sel.close()
        if not ready:
            self.proc.kill()
            self.proc.wait()
            return {"outcome": "timeout"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            return {"outcome": "death", "detail": f"the worker exited with {code}"}
        return json.loads(line)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
