"""uir.jit: one trace per abstract signature, static arguments, pytrees in
and out, the lower/compile stages, HLO that reads like JAX's, and errors
that name the operation, the shapes and the user's line."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import uir
import uir.numpy as jnp
from uir import tree_util


def test_cached_calls_do_not_retrace_and_new_shapes_or_statics_do():
    def f(x, n):
        return x * n

    g = uir.jit(f, static_argnums=1)
    x = np.ones(3, np.float32)
    g(x, 2)
    g(x + 1, 2)
    assert g.trace_count == 1
    g(np.ones(4, np.float32), 2)
    assert g.trace_count == 2
    np.testing.assert_array_equal(g(x, 5), [5, 5, 5])
    assert g.trace_count == 3
    g(x.astype(np.int32), 5)
    assert g.trace_count == 4


def test_lower_traces_without_compiling_and_a_call_compiles_the_same_trace(monkeypatch):
    from uir._src.core import backend

    compiles = []
    real = backend.compile
    monkeypatch.setattr(
        backend, "compile", lambda *a, **k: compiles.append(a[0].name) or real(*a, **k)
    )
    g = uir.jit(lambda x: jnp.tanh(x) * 2)
    x = np.linspace(-1, 1, 8).astype(np.float32)
    lowered = g.lower(x)
    assert compiles == [] and g.trace_count == 1
    np.testing.assert_allclose(g(x), np.tanh(x) * 2, rtol=1e-6)
    assert len(compiles) == 1 and g.trace_count == 1
    assert g.lower(x) is lowered and lowered.compile() is lowered.compile()
    g(x)
    assert len(compiles) == 1


def test_static_argnames_and_python_control_flow_on_static_values():
    @uir.jit
    def dummy(x):
        return x

    def f(x, *, mode):
        if mode == "double":
            return x * 2
        return x + 1

    g = uir.jit(f, static_argnames="mode")
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(g(x, mode="double"), x * 2)
    np.testing.assert_array_equal(g(x, mode="inc"), x + 1)
    assert g.trace_count == 2


Point = namedtuple("Point", ["x", "y"])


class Box:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi


tree_util.register_pytree_node(Box, lambda b: ((b.lo, b.hi), None), lambda _, c: Box(*c))


def test_pytrees_in_and_out():
    @uir.jit
    def f(params, batch):
        w, b = params["w"], params["b"]
        out = batch.x @ w + b
        return {"out": out, "pair": (out.sum(), None), "point": Point(batch.y * 2, out.shape[0])}

    params = {"w": np.ones((3, 2), np.float32), "b": np.array([1, 2], np.float32)}
    batch = Point(np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(4))
    got = f(params, batch)
    want = batch.x @ params["w"] + params["b"]
    np.testing.assert_array_equal(got["out"], want)
    assert got["pair"][1] is None and np.isclose(got["pair"][0], want.sum())
    assert isinstance(got["point"], Point) and got["point"].x == 8 and got["point"].y == 2


def test_registered_classes_are_pytrees():
    @uir.jit
    def width(box):
        return Box(box.lo * 0, box.hi - box.lo)

    out = width(Box(np.float32(1), np.float32(5)))
    assert isinstance(out, Box) and out.hi == 4


def test_a_different_pytree_structure_retraces():
    f = uir.jit(lambda t: sum(tree_util.tree_leaves(t)))
    assert f((np.float32(1), np.float32(2))) == 3
    assert f([np.float32(1), np.float32(2), np.float32(3)]) == 6
    assert f({"a": np.float32(1)}) == 1
    assert f.trace_count == 3


def test_tree_util_functions():
    tree = {"b": [1, (2, None)], "a": Point(3, 4)}
    leaves, treedef = tree_util.tree_flatten(tree)
    assert leaves == [3, 4, 1, 2]
    assert tree_util.tree_unflatten(treedef, leaves) == tree
    assert tree_util.tree_map(lambda v: v * 10, tree) == {"b": [10, (20, None)], "a": Point(30, 40)}
    assert tree_util.tree_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match="structures differ"):
        tree_util.tree_map(lambda a, b: a, [1, 2], (1, 2))


def test_lower_compile_and_make_hlo():
    def f(x, y):
        return jnp.tanh(x) * y

    x = np.ones((2, 3), np.float32)
    lowered = uir.jit(f).lower(x, x)
    text = lowered.as_text()
    assert "HloModule jit_f" in text and "tanh(" in text
    assert lowered.module.entry.parameters[0].shape.dims == (2, 3)
    compiled = lowered.compile()
    assert "tanh(" in compiled.as_text()
    np.testing.assert_allclose(compiled(x, x), np.tanh(x))
    module = uir.make_hlo(f)(x, x)
    assert module == lowered.module
    module.verify()


def test_hlo_names_ops_and_points_metadata_at_the_users_line():
    def f(x):
        return jnp.exp(x) + 1  # this line

    text = uir.jit(f).lower(np.ones(2, np.float32)).as_text()
    import inspect

    line = inspect.getsourcelines(f)[1] + 1
    assert 'op_name="jit(f)/exp"' in text
    assert f"source_line={line}" in text and __file__ in text
    assert "exponential(" in text


def test_shape_mismatch_is_a_trace_error_naming_op_shapes_and_line():
    def f(x, y):
        return x + y

    with pytest.raises(
        uir.TraceError,
        match=r"add: shapes \(2, 3\), \(4,\) do not broadcast \(at .*test_trace_jit.py:\d+\)",
    ):
        uir.jit(f)(np.ones((2, 3), np.float32), np.ones(4, np.float32))
    with pytest.raises(
        uir.TraceError, match=r"matmul: f32\[2,3\] @ f32\[2,3\]: inner dimensions 3 and 2 differ"
    ):
        uir.jit(lambda a, b: a @ b)(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_python_control_flow_on_traced_values_says_what_to_do():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(
        uir.TraceError, match=r"bool\(\) of a traced array .*lax\.cond.*static_argnums"
    ):
        uir.jit(f)(np.ones(3, np.float32))
    with pytest.raises(uir.TraceError, match="int"):
        uir.jit(lambda x: int(x))(np.float32(1))


def test_wrong_arguments_to_a_compiled_function():
    compiled = uir.jit(lambda x: x * 2).lower(np.ones(3, np.float32)).compile()
    with pytest.raises(TypeError, match="does not match the compiled"):
        compiled(np.ones(4, np.float32))
    with pytest.raises(TypeError, match="not a valid argument"):
        uir.jit(lambda x: x)("text")


def test_scalars_and_constants_as_arguments_and_results():
    f = uir.jit(lambda a, b: (a * b, 3.0, np.arange(2)))
    got = f(2, np.float32(1.5))
    assert got[0] == 3.0 and got[1] == 3.0
    np.testing.assert_array_equal(got[2], [0, 1])


def test_jitted_functions_compose_and_inline():
    inner = uir.jit(lambda v: v * 3)
    outer = uir.jit(lambda v: inner(v) + 1)
    np.testing.assert_array_equal(outer(np.ones(2, np.float32)), [4, 4])
