"""Hypothesis strategies for experiments (uir.testing.strategies): shapes,
the dtypes uir computes in, arrays of them with finite values, and random
valid HLO modules (elementwise chains, broadcasts, reductions and dots over
one random shape) ready for uir.hlo.parse_module."""

from __future__ import annotations

import numpy as np

try:
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError as e:  # a test dependency, not a runtime one
    raise ImportError(
        "uir.testing.strategies needs Hypothesis: pip install hypothesis (uir's `test` extra)"
    ) from e

FLOATS = ("float32", "float64")
INTEGERS = ("int32", "int64", "uint8")
DTYPES = (*FLOATS, *INTEGERS, "bool")
_HLO_TYPE = {"float32": "f32", "float64": "f64"}
_UNARY = ("negate", "abs", "exponential", "tanh", "sine", "cosine", "floor", "log-plus-one")
_BINARY = ("add", "subtract", "multiply", "maximum", "minimum")


def shapes(*, min_dims: int = 0, max_dims: int = 4, min_side: int = 1, max_side: int = 8):
    """Array shapes (tuples)."""
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
    )


def dtypes(kinds: str = "fib"):
    """NumPy dtypes uir computes in: f(loat), i(nteger), b(ool)."""
    names = [n for n in FLOATS if "f" in kinds]
    names += [n for n in INTEGERS if "i" in kinds]
    names += ["bool"] if "b" in kinds else []
    if not names:
        raise ValueError(f"dtypes: kinds must name some of 'f', 'i', 'b', got {kinds!r}")
    return st.sampled_from([np.dtype(n) for n in names])


def arrays(dtype=None, shape=None, *, magnitude: float = 1e3):
    """NumPy arrays of `dtype` and `shape` (strategies or values; drawn when
    None), floats finite and within +-magnitude."""
    dtype = dtypes() if dtype is None else dtype
    shape = shapes() if shape is None else shape

    def elements(dt):
        dt = np.dtype(dt)
        if dt.kind == "f":
            width = 32 if dt == np.float32 else 64
            return st.floats(-magnitude, magnitude, allow_nan=False, width=width)
        return None  # Hypothesis's own for integers and booleans

    if isinstance(dtype, st.SearchStrategy):
        return dtype.flatmap(lambda dt: hnp.arrays(dt, shape, elements=elements(dt)))
    return hnp.arrays(dtype, shape, elements=elements(dtype))


@st.composite
def hlo_modules(draw, *, max_ops: int = 8, dtype: str = "float32"):
    """The text of a random valid HLO module: two parameters of one random
    shape (rank 1 to 3) and up to `max_ops` ops: elementwise unary and
    binary ops, scalar constants broadcast in, reductions along a random
    dimension broadcast back, and (rank 2) a dot with a transposed operand.
    Any finite inputs are valid (log-plus-one takes |x|)."""
    t = _HLO_TYPE[dtype]
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 9)) for _ in range(rank)]
    shape = f"{t}[{','.join(map(str, dims))}]"
    lines = [f"  p0 = {shape} parameter(0)", f"  p1 = {shape} parameter(1)"]
    values = ["p0", "p1"]
    need_add = False
    names = iter(range(10_000))

    def new(text: str) -> str:
        name = f"v{next(names)}"
        lines.append(f"  {name} = {text}")
        return name

    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.integers(0, 4))
        x, y = draw(st.sampled_from(values)), draw(st.sampled_from(values))
        if kind == 0:
            op = draw(st.sampled_from(_UNARY))
            if op == "log-plus-one":
                x = new(f"{shape} abs({x})")
            values.append(new(f"{shape} {op}({x})"))
        elif kind == 1:
            values.append(new(f"{shape} {draw(st.sampled_from(_BINARY))}({x}, {y})"))
        elif kind == 2:
            c = draw(st.floats(-4, 4, allow_nan=False, width=32))
            scalar = new(f"{t}[] constant({c!r})")
            values.append(
                new(
                    f"{shape} multiply({x}, {new(f'{shape} broadcast({scalar}), dimensions={{}}')})"
                )
            )
        elif kind == 3:
            d = draw(st.integers(0, rank - 1))
            keep = [k for k in range(rank) if k != d]
            small = f"{t}[{','.join(str(dims[k]) for k in keep)}]"
            zero = new(f"{t}[] constant(0)")
            r = new(f"{small} reduce({x}, {zero}), dimensions={{{d}}}, to_apply=add")
            need_add = True
            back = new(f"{shape} broadcast({r}), dimensions={{{','.join(map(str, keep))}}}")
            values.append(new(f"{shape} subtract({x}, {back})"))
        elif rank == 2:
            n = dims[1]
            sq = f"{t}[{n},{n}]"
            w = new(f"{sq} dot({y}, {y}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}")
            values.append(
                new(
                    f"{shape} dot({x}, {w}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"
                )
            )
    root = values[-1]
    lines[-1] = lines[-1].replace(f"  {root} =", f"  ROOT {root} =", 1)
    head = "HloModule random\n"
    if need_add:
        head += f"add {{\n  a = {t}[] parameter(0)\n  b = {t}[] parameter(1)\n  ROOT s = {t}[] add(a, b)\n}}\n"
    return head + "ENTRY main {\n" + "\n".join(lines) + "\n}\n"
