"""JAX's utilities for code written against it: uir.ShapeDtypeStruct (to
lower without data), uir.eval_shape, uir.block_until_ready and
uir.device_put; checked against what jax gives for the same calls."""

from __future__ import annotations

import numpy as np
import pytest

import uir


def f(a, b):
    return {"s": a @ b, "m": (a.max(axis=0), b[0].astype(np.int32))}


def test_lower_takes_shape_dtype_structs_and_the_result_runs_on_arrays():
    a, b = uir.ShapeDtypeStruct((2, 3), np.float32), uir.ShapeDtypeStruct((3, 4), np.float32)
    jitted = uir.jit(f)
    compiled = jitted.lower(a, b).compile()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((3, 4), np.float32)
    got = compiled(x, y)
    np.testing.assert_array_equal(got["s"], x @ y)
    # The same abstract signature: one trace for the structs and the arrays.
    jitted(x, y)
    assert jitted.trace_count == 1
    with pytest.raises(TypeError, match="no data"):
        jitted(a, y)


def test_eval_shape_gives_the_results_shapes_and_dtypes_as_jax_does():
    a = uir.ShapeDtypeStruct((2, 3), np.float32)
    got = uir.eval_shape(f, a, np.ones((3, 4), np.float32))
    assert got == {
        "s": uir.ShapeDtypeStruct((2, 4), np.float32),
        "m": (uir.ShapeDtypeStruct((3,), np.float32), uir.ShapeDtypeStruct((4,), np.int32)),
    }
    assert repr(got["s"]) == "ShapeDtypeStruct(shape=(2, 4), dtype=float32)"
    jax = pytest.importorskip("jax")
    theirs = jax.eval_shape(
        f, jax.ShapeDtypeStruct((2, 3), np.float32), np.ones((3, 4), np.float32)
    )
    ours_leaves = uir.tree_util.tree_leaves(got)
    for mine, their in zip(ours_leaves, jax.tree_util.tree_leaves(theirs), strict=True):
        assert mine.shape == their.shape and mine.dtype == their.dtype
    # jax's structs are taken as arguments too.
    assert uir.eval_shape(lambda v: v.sum(0), jax.ShapeDtypeStruct((5, 2), np.float32)) == (
        uir.ShapeDtypeStruct((2,), np.float32)
    )


def test_block_until_ready_and_device_put():
    x = np.arange(4.0)
    assert uir.block_until_ready(x) is x
    tree = {"a": x, "b": [np.float32(2)]}
    put = uir.device_put(tree)
    assert put["a"] is not x and np.array_equal(put["a"], x)
    assert uir.device_put(x, may_alias=True) is x
    with pytest.raises(ValueError, match="unknown device"):
        uir.device_put(x, "tpu")
