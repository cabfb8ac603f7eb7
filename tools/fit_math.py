"""Fits the f32 polynomials of the vectorized math (csrc/codegen/math.cc).

Over the reduced range |r| <= ln2/2 (plus a margin), it fits e^r (degree 6)
and (e^r - 1) / r (degree 5) to relative error: iteratively reweighted
least squares (Lawson's weights: the worst points gain weight until the
error levels out, near minimax), one coefficient at a time from the
lowest, each rounded to f32 before the rest are fitted again, so that the
rounding of one is absorbed by those above it. Prints the coefficients
and the largest relative error of the rounded polynomial in exact
arithmetic, in f32 ulps. The reference is NumPy's long double (64-bit
mantissa on x86), well below the errors fitted.

    python tools/fit_math.py
"""

from __future__ import annotations

import numpy as np

HALF_LN2 = float(np.log(2.0) / 2) + 1e-4
ULP = 2.0**-24


def fit(f, degree: int, fixed: list[float], points: int = 20001) -> tuple[float, list[float]]:
    r = np.linspace(-HALF_LN2, HALF_LN2, points)
    want = f(r.astype(np.longdouble)).astype(np.float64)
    coefficients = list(fixed)
    while len(coefficients) < degree + 1:
        k = len(coefficients)
        known = sum(c * r**i for i, c in enumerate(coefficients))
        basis = np.stack([r**i for i in range(k, degree + 1)], axis=1)
        weight = np.ones_like(r)
        best = None
        for _ in range(60):
            row = np.sqrt(weight) / np.abs(want)
            c, *_ = np.linalg.lstsq(basis * row[:, None], (want - known) * row, rcond=None)
            err = (known + basis @ c - want) / want
            worst = float(np.max(np.abs(err)))
            if best is None or worst < best[0]:
                best = (worst, c)
            weight = weight * (np.abs(err) / worst) + 1e-300
            weight /= weight.mean()
        coefficients.append(float(np.float32(best[1][0])))
    err = (sum(c * r**i for i, c in enumerate(coefficients)) - want) / want
    return float(np.max(np.abs(err))), coefficients


def expm1_over_r(r):
    safe = np.where(r == 0, 1, r)
    return np.where(r == 0, 1, np.expm1(safe) / safe)


def main() -> None:
    for name, f, degree, fixed in (
        ("kExpF32: e^r", np.exp, 6, [1.0, 1.0]),
        ("kExpm1OverRF32: (e^r - 1) / r", expm1_over_r, 5, [1.0]),
    ):
        worst, c = fit(f, degree, fixed)
        print(f"{name}, degree {degree}: {worst / ULP:.3f} ulp")
        print("  {" + ", ".join(repr(v) for v in c) + "}")


if __name__ == "__main__":
    main()
