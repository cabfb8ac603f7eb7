"""jax.numpy's keywords on reductions and products: `initial`, `where`,
`out=None`, `promote_integers`, `correction`, `keepdims` of argmax,
`precision` and `preferred_element_type`, and the array methods' argument
order; checked against NumPy (values) and jax.numpy (types), eagerly and
under jit."""

from __future__ import annotations

import inspect
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import uir
import uir.numpy as unp

jnp = pytest.importorskip("jax.numpy")


@st.composite
def masked_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    axes = draw(st.sampled_from([None, 0, -1, tuple(range(rank))]))
    keepdims = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(-5, 6, shape).astype(np.float32)
    # The mask broadcasts: a row of it or a whole one.
    mask = rng.random(shape[-1:] if draw(st.booleans()) else shape) < 0.6
    return x, axes, keepdims, mask


@settings(max_examples=40, deadline=None)
@given(masked_cases(), st.booleans())
def test_masked_reductions_with_an_initial_value_match_numpy(case, jit):
    x, axis, keepdims, mask = case
    run = uir.jit if jit else (lambda f: f)
    for name, initial in (("sum", 1.5), ("prod", 2.0), ("max", -3.0), ("min", 4.0)):
        f = run(
            lambda v, m, name=name, initial=initial: getattr(unp, name)(
                v, axis=axis, keepdims=keepdims, initial=initial, where=m
            )
        )
        want = getattr(np, name)(x, axis=axis, keepdims=keepdims, initial=initial, where=mask)
        np.testing.assert_allclose(f(x, mask), want, rtol=1e-6, err_msg=name)
    for name in ("all", "any"):
        f = run(lambda v, m, name=name: getattr(unp, name)(v > 0, axis=axis, where=m))
        np.testing.assert_array_equal(f(x, mask), getattr(np, name)(x > 0, axis=axis, where=mask))


@settings(max_examples=30, deadline=None)
@given(masked_cases())
def test_masked_mean_var_and_std_match_numpy(case):
    x, axis, keepdims, mask = case
    full = np.broadcast_to(mask, x.shape)
    counts = full.sum(axis=axis, keepdims=keepdims)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's empty slices
        for name, kw in (("mean", {}), ("var", {"ddof": 1}), ("std", {"correction": 0})):
            np_kw = {"ddof": kw.get("ddof", kw.get("correction"))} if kw else {}
            got = getattr(unp, name)(x, axis=axis, keepdims=keepdims, where=mask, **kw)
            want = getattr(np, name)(x, axis=axis, keepdims=keepdims, where=mask, **np_kw)
            # NumPy divides by zero counts to NaN too (with a warning).
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} {counts}")


def test_reduction_types_follow_jax():
    b = np.array([True, False, True])
    i8 = np.array([100, 100, 100], np.int8)
    for name in ("sum", "prod"):
        for x in (b, i8):
            for promote in (True, False):
                got = getattr(unp, name)(x, promote_integers=promote)
                want = getattr(jnp, name)(x, promote_integers=promote)
                assert got.dtype == want.dtype, (name, x.dtype, promote)
                np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(unp.max(np.zeros((0, 3)), axis=0, initial=2.0), [2.0] * 3)


def test_unsupported_and_incomplete_keywords_are_refused_as_jax_does():
    x = np.ones(3, np.float32)
    with pytest.raises(uir.TraceError, match="'out' argument is not supported"):
        unp.sum(x, out=np.zeros(()))
    with pytest.raises(uir.TraceError, match="specify 'initial'"):
        unp.max(x, where=x > 0)
    with pytest.raises(uir.TraceError, match="ddof and correction"):
        unp.var(x, ddof=1, correction=1)


def test_argmax_keepdims_without_an_axis_keeps_every_dimension():
    x = np.arange(12).reshape(3, 4) % 5
    for name in ("argmax", "argmin"):
        got = getattr(unp, name)(x, keepdims=True)
        np.testing.assert_array_equal(got, getattr(np, name)(x, keepdims=True))
        np.testing.assert_array_equal(
            getattr(unp, name)(x, 1, None, True), getattr(np, name)(x, 1, keepdims=True)
        )


PRODUCTS = {
    "dot": lambda m, a, b, **kw: m.dot(a, b, **kw),
    "matmul": lambda m, a, b, **kw: m.matmul(a, b, **kw),
    "tensordot": lambda m, a, b, **kw: m.tensordot(a, b, axes=1, **kw),
    "inner": lambda m, a, b, **kw: m.inner(a, b.T, **kw),
    "einsum": lambda m, a, b, **kw: m.einsum("ij,jk->ik", a, b, **kw),
    "vdot": lambda m, a, b, **kw: m.vdot(a, a, **kw),
}


@pytest.mark.parametrize("name", sorted(PRODUCTS))
@pytest.mark.parametrize(
    "operands,preferred",
    [
        (np.int8, np.float32),
        (np.float32, np.int32),
        (ml_dtypes.bfloat16, np.float32),
        (np.float32, None),
    ],
)
def test_products_give_the_preferred_element_type(name, operands, preferred):
    rng = np.random.default_rng(1)
    a = rng.integers(-8, 8, (3, 4)).astype(operands)
    b = rng.integers(-8, 8, (4, 2)).astype(operands)
    kw = {"preferred_element_type": preferred, "precision": "highest"}
    got = uir.jit(lambda x, y: PRODUCTS[name](unp, x, y, **kw))(a, b)
    want = PRODUCTS[name](jnp, a, b, **kw)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_a_narrower_preferred_type_is_refused_as_jax_does():
    a = np.ones((2, 2), np.int32)
    with pytest.raises(uir.TraceError, match="must not be narrower than the original type"):
        unp.dot(a, a, preferred_element_type=np.int16)


def test_the_array_methods_take_jaxs_argument_order():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    f = uir.jit(
        lambda v: (
            v.sum(0, None, None, True),
            v.max(1, None, True),
            v.mean(1, None, None, True),
            v.var(0, None, None, 1),
            v.any(0, None, True),
        )
    )
    got = f(x)
    want = (
        x.sum(0, keepdims=True),
        x.max(1, keepdims=True),
        x.mean(1, keepdims=True),
        x.var(0, ddof=1),
        x.any(0, keepdims=True),
    )
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize(
    "name",
    [
        *("sum", "prod", "max", "min", "all", "any", "mean", "var", "std", "argmax", "argmin"),
        *("dot", "matmul", "tensordot", "inner", "vdot", "einsum"),
    ],
)
def test_signatures_name_jaxs_parameters(name):
    theirs = inspect.signature(getattr(jnp, name)).parameters
    ours = inspect.signature(getattr(unp, name)).parameters
    missing = [p for p in theirs if p not in ours]
    assert missing == [], f"uir.numpy.{name} lacks {missing}"
    # Positional parameters in the same order.
    positional = [
        p.name for p in theirs.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    ours_positional = [
        p.name for p in ours.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    assert ours_positional[: len(positional)] == positional


def test_lax_binary_ops_refuse_mixed_dtypes_as_jax_does():
    from uir import lax

    f32, i32 = np.float32(1), np.int32(2)
    for op in (lax.add, lax.mul, lax.max, lax.min, lax.sub):
        with pytest.raises(uir.TraceError, match="requires arguments to have the same dtypes"):
            op(f32, i32)
        # A Python scalar takes the array's type (it is weakly typed).
        assert op(np.ones(2, np.float32), 2).dtype == np.float32
    with pytest.raises(TypeError):
        pytest.importorskip("jax").lax.add(f32, i32)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.booleans(), st.integers(0, 2**32 - 1))
def test_piecewise_matches_numpy(conditions, default, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, (4, 5)).astype(np.float32)
    bounds = sorted(rng.integers(-6, 7, conditions))
    condlist = [x > b for b in bounds]
    funclist = [
        (lambda v, k=k: v * k + 1) if k % 2 else float(k) for k in range(conditions + default)
    ]
    want = np.piecewise(x, condlist, funclist)
    np.testing.assert_array_equal(unp.piecewise(x, condlist, funclist), want)
    traced = uir.jit(lambda v: unp.piecewise(v, [v > b for b in bounds], funclist))(x)
    np.testing.assert_array_equal(traced, want)
    with pytest.raises(uir.TraceError, match="funclist must have"):
        unp.piecewise(x, condlist, [*funclist, 0.0, 1.0])


@pytest.mark.parametrize(
    "name,kw",
    [
        ("softmax", {"where": "mask"}),
        ("log_softmax", {"axis": 0, "where": "mask"}),
        ("logsumexp", {"axis": 1, "where": "mask"}),
        ("logsumexp", {"axis": 1, "b": "weights"}),
        ("logsumexp", {"axis": 0, "b": "weights", "return_sign": True}),
        ("logsumexp", {"b": "weights", "keepdims": True, "where": "mask"}),
    ],
)
def test_nn_reductions_take_where_and_weights_as_jax_nn_does(name, kw):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    given = {"mask": x > -0.3, "weights": rng.standard_normal((4, 6)).astype(np.float32)}
    kw = {k: given.get(v, v) if isinstance(v, str) else v for k, v in kw.items()}
    ours = uir.jit(lambda v: getattr(uir.nn, name)(v, **kw))(x)
    theirs = getattr(jax.nn, name)(x, **kw)
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize(
    "module,name",
    [
        ("nn", "softmax"),
        ("nn", "log_softmax"),
        ("nn", "logsumexp"),
        ("numpy", "vecdot"),
        ("numpy", "matvec"),
        ("numpy.linalg", "matmul"),
        ("numpy.linalg", "tensordot"),
        ("numpy.linalg", "vecdot"),
        ("numpy.linalg", "multi_dot"),
    ],
)
def test_more_signatures_name_jaxs_parameters(module, name):
    import importlib

    theirs = inspect.signature(getattr(importlib.import_module(f"jax.{module}"), name))
    ours = inspect.signature(getattr(importlib.import_module(f"uir.{module}"), name))
    missing = [p for p in theirs.parameters if p not in ours.parameters and p != "out_sharding"]
    assert missing == [], f"uir.{module}.{name} lacks {missing}"


SIGNATURE_NAMES = [
    *("divide", "floor_divide", "fmod", "mod", "power", "remainder", "right_shift"),
    *("true_divide", "arctan2", "cumsum", "cumprod", "nancumsum", "nancumprod", "trace"),
    *("ptp", "outer", "modf", "isposinf", "isneginf", "nanargmax", "nanargmin", "choose"),
    *("round", "around", "concatenate", "stack", "split"),
]


@pytest.mark.parametrize("name", SIGNATURE_NAMES)
def test_numpy_signatures_name_jaxs_parameters_in_order(name):
    theirs = inspect.signature(getattr(jnp, name)).parameters
    ours = inspect.signature(getattr(unp, name)).parameters
    assert [p for p in theirs if p not in ours] == []
    assert list(ours)[: len(theirs)] == list(theirs)


def test_the_out_forms_refuse_an_array_and_the_new_keywords_work():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 0.5, np.nan]], np.float32)
    for call in (
        lambda: unp.cumsum(x, out=np.zeros(6)),
        lambda: unp.round(x, out=x),
        lambda: unp.isposinf(x, out=x),
        lambda: unp.stack([x, x], out=x),
    ):
        with pytest.raises(uir.TraceError, match="'out' argument is not supported"):
            call()
    np.testing.assert_array_equal(
        unp.concatenate([x, x[:1]], axis=None, dtype=np.float16),
        np.concatenate([x, x[:1]], axis=None, dtype=np.float16),
    )
    np.testing.assert_array_equal(
        unp.nanargmax(x, 1, None, True), np.nanargmax(x, 1, keepdims=True)
    )
    np.testing.assert_array_equal(unp.nanargmin(x, keepdims=True), np.nanargmin(x, keepdims=True))
    assert unp.stack([x, x], 1, dtype=np.int8).dtype == np.int8


@settings(max_examples=30, deadline=None)
@given(masked_cases())
def test_nan_reductions_with_masks_match_numpy(case):
    x, axis, keepdims, mask = case
    x = x.copy()
    x[x > 3] = np.nan  # some NaNs, sometimes whole rows
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, kw in (
            ("nansum", {"initial": 1.0}),
            ("nanprod", {}),
            ("nanmax", {"initial": -9.0}),
            ("nanmin", {"initial": 9.0}),
            ("nanmean", {}),
            ("nanvar", {"ddof": 0}),
            ("nanstd", {}),
        ):
            got = getattr(unp, name)(x, axis=axis, keepdims=keepdims, where=mask, **kw)
            want = getattr(np, name)(x, axis=axis, keepdims=keepdims, where=mask, **kw)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        # Without a mask or initial: NaN where a slice is all NaN.
        np.testing.assert_array_equal(
            unp.nanmax(x, axis=axis, keepdims=keepdims), np.nanmax(x, axis=axis, keepdims=keepdims)
        )


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_sorts_descending_keep_equal_elements_in_order_as_jax_does(axis):
    x = np.array([[1, 2, 1, 2, np.nan, 0.0], [3, 3, 1, -0.0, 0.0, np.nan]], np.float32)
    for kw in ({"descending": True}, {"descending": False, "stable": False}):
        ours = uir.jit(lambda v, kw=kw: (unp.argsort(v, axis, **kw), unp.sort(v, axis, **kw)))(x)
        theirs = (jnp.argsort(x, axis, **kw), jnp.sort(x, axis, **kw))
        np.testing.assert_array_equal(ours[0], np.asarray(theirs[0]))
        np.testing.assert_array_equal(ours[1], np.asarray(theirs[1]))
    assert unp.argsort(x, dtype=np.int16).dtype == np.int16
    with pytest.raises(uir.TraceError, match="'order'"):
        unp.sort(x, order="f0")
    with pytest.raises(uir.TraceError, match="'kind' argument to argsort is not supported"):
        unp.argsort(x, kind="stable")


@pytest.mark.parametrize(
    "name",
    ["sort", "argsort", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"],
)
def test_sort_and_nan_signatures_are_jaxs(name):
    theirs = inspect.signature(getattr(jnp, name)).parameters
    ours = inspect.signature(getattr(unp, name)).parameters
    assert list(ours) == list(theirs)


def test_reshape_ravel_repeat_and_clip_as_jax_numpy():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    counts = np.array([1, 0, 2])
    cases = [
        lambda m, v: m.reshape(v, (4, 6), order="F"),
        lambda m, v: m.reshape(v, (-1, 2), order="F", copy=True),
        lambda m, v: m.ravel(v, order="F"),
        lambda m, v: m.repeat(v, counts, axis=1),
        lambda m, v: m.repeat(v, 2, axis=2, total_repeat_length=5),
        lambda m, v: m.repeat(v, counts, axis=1, total_repeat_length=6),
        lambda m, v: m.repeat(v, 3),
        lambda m, v: m.clip(v, min=3),
        lambda m, v: m.clip(v, 2, 5),
        lambda m, v: m.clip(v, max=4),
    ]
    for case in cases:
        want = np.asarray(case(jnp, x))
        np.testing.assert_array_equal(case(unp, x), want)
        np.testing.assert_array_equal(uir.jit(lambda v, case=case: case(unp, v))(x), want)
    with pytest.raises(uir.TraceError, match="repeats must be static"):
        uir.jit(lambda v, r: unp.repeat(v, r))(x, np.int32(2))


@pytest.mark.parametrize("name", ["reshape", "ravel", "repeat", "clip"])
def test_shape_signatures_name_jaxs_parameters(name):
    theirs = inspect.signature(getattr(jnp, name)).parameters
    ours = inspect.signature(getattr(unp, name)).parameters
    # (out_sharding: sharding is outside uir's one device.)
    assert [p for p in theirs if p not in ours and p != "out_sharding"] == []


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.integers(0, 12),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.integers(0, 2**32 - 1),
)
def test_nonzero_family_with_a_static_size_matches_numpy(shape, size, fill, seed):
    x = (np.random.default_rng(seed).random(shape) < 0.4).astype(np.int32)
    found = np.nonzero(x)
    pad = 0 if fill is None else fill

    def padded(v):
        v = v[:size]
        return np.concatenate([v, np.full(size - v.size, pad, v.dtype)])

    want = tuple(padded(v) for v in found)
    got = uir.jit(lambda v: unp.nonzero(v, size=size, fill_value=fill))(x)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(
        unp.argwhere(x, size=size, fill_value=fill), np.stack(want, axis=1).reshape(size, x.ndim)
    )
    np.testing.assert_array_equal(
        unp.flatnonzero(x, size=size, fill_value=fill), padded(np.flatnonzero(x))
    )
    for g, w in zip(unp.where(x > 0, size=size, fill_value=fill), want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_nonzero_without_a_size_says_to_give_one():
    with pytest.raises(uir.TraceError, match="give size="):
        unp.nonzero(np.array([0, 1]))
    with pytest.raises(uir.TraceError, match="both x and y, or neither"):
        unp.where(np.array([True]), 1)
    for name in ("nonzero", "argwhere", "flatnonzero", "where"):
        theirs = inspect.signature(getattr(jnp, name)).parameters
        ours = inspect.signature(getattr(unp, name)).parameters
        assert list(ours) == list(theirs), name
