"""uir.numpy's elementwise functions and uir.lax's read one table
(uir/_src/lax/elementwise.py): each op's HLO opcode and the element kinds it
takes. NumPy's functions promote first (integers and bools to float where
the op is inexact only, as JAX does), then accept exactly what lax accepts
of the promoted type, refusing the rest at trace time with a TraceError
that names the NumPy function."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.numpy as unp
from uir import lax
from uir._src.lax import elementwise

# NumPy's name -> lax's, for the functions built from the table.
UNARY = {
    "exp": "exp",
    "log": "log",
    "log1p": "log1p",
    "expm1": "expm1",
    "sqrt": "sqrt",
    "cbrt": "cbrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "sinh": "sinh",
    "cosh": "cosh",
    "arcsin": "asin",
    "arccos": "acos",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
    "floor": "floor",
    "ceil": "ceil",
    "erf": "erf",
}
BINARY = {
    "arctan2": "atan2",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "left_shift": "shift_left",
}
DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.float16, np.float32, np.complex64]


def _value(dtype):
    if dtype == np.bool_:
        return np.array([True, False])
    if np.issubdtype(dtype, np.complexfloating):
        return np.array([0.25 + 0.5j, 0.5 - 0.25j], dtype)
    if np.issubdtype(dtype, np.floating):
        return np.array([0.25, 0.5], dtype)
    return np.array([1, 2], dtype)


def _promoted(kinds, dtype):
    """The dtype NumPy's function computes in."""
    if kinds in (elementwise.FLOAT, elementwise.INEXACT) and (
        dtype == np.bool_ or np.issubdtype(dtype, np.integer)
    ):
        return np.float32
    if kinds == elementwise.INT and dtype == np.bool_:
        return np.int32
    return dtype


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_numpy_accepts_what_lax_accepts_after_promotion(name, dtype):
    lax_name = UNARY.get(name) or BINARY[name]
    table = elementwise.UNARY if name in UNARY else elementwise.BINARY
    opcode, kinds = table[lax_name]
    np_fn, lax_fn = getattr(unp, name), getattr(lax, lax_name)
    x = _value(dtype)
    if name in ("floor", "ceil") and (dtype == np.bool_ or np.issubdtype(dtype, np.integer)):
        # Whole already: jax.numpy gives them back as they are.
        np.testing.assert_array_equal(uir.jit(np_fn)(x), x)
        return
    args = (x,) if name in UNARY else (x, x)
    compute = _promoted(kinds, dtype)
    if not elementwise.accepts(compute, kinds):
        with pytest.raises(uir.TraceError, match=f"{name} does not accept dtype"):
            uir.jit(np_fn)(*args)
        return
    got = uir.jit(np_fn)(*args)
    lax_args = [a.astype(compute) for a in args]
    want = uir.jit(lax_fn)(*lax_args)
    np.testing.assert_array_equal(got, want)
    hlo = uir.jit(np_fn).lower(*args).as_text()
    assert f" {opcode}(" in hlo, hlo


def test_the_table_is_what_lax_checks():
    for table in (elementwise.UNARY, elementwise.BINARY):
        for lax_name, (_, kinds) in table.items():
            fn = getattr(lax, lax_name)
            for dtype in DTYPES:
                x = _value(dtype)
                args = (x,) if table is elementwise.UNARY else (x, x)
                if elementwise.accepts(dtype, kinds):
                    uir.jit(fn).lower(*args)
                else:
                    with pytest.raises(uir.TraceError, match=f"{lax_name} does not accept"):
                        uir.jit(fn).lower(*args)


@pytest.mark.xla
@pytest.mark.parametrize("name", sorted(UNARY) + sorted(BINARY))
def test_numpy_refuses_the_dtypes_jax_numpy_refuses(name, jax_x32):
    import jax.numpy as jnp
    import jax.scipy.special

    # jax.numpy has no erf; uir.numpy's is jax.scipy.special.erf.
    jax_fn = jax.scipy.special.erf if name == "erf" else getattr(jnp, name)
    for dtype in DTYPES:
        x = _value(dtype)
        args = (x,) if name in UNARY else (x, x)
        try:
            want = np.asarray(jax_fn(*args))
        except TypeError:
            with pytest.raises(uir.TraceError):
                uir.jit(getattr(unp, name))(*args)
            continue
        got = uir.jit(getattr(unp, name))(*args)
        assert got.dtype == want.dtype, (name, dtype, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-6)
