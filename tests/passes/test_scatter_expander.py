"""scatter-expander: scatters the runtime's loop does not run (several
operands, a combiner of its own) compile as a loop over the indices, and
give the evaluator's results for any dimension numbers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xla_util import assert_compiled_like_xla

import uir

# The combiners, as a computation body over parameters a (old) and b
# (update). Each gives the same result in any order of updates to one
# element, so the comparison is exact however the updates are ordered.
COMBINERS = {
    "add": "ROOT r = {t}[] add(a, b)",  # the runtime's scatter loop takes this one
    "sum_of_squares": "bb = {t}[] multiply(b, b)\n  ROOT r = {t}[] add(a, bb)",
    "double_old": "two = {t}[] constant(2)\n  ROOT r = {t}[] multiply(a, two)",
}


@st.composite
def scatter_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 5)) for _ in range(rank)]
    batching = draw(st.integers(0, 1)) if rank > 1 else 0
    batched = [draw(st.integers(0, rank - 1))] if batching else []
    free = [d for d in range(rank) if d not in batched]
    mapped = draw(st.permutations(free))[: draw(st.integers(1 if batching == 0 else 0, len(free)))]
    inserted = sorted(d for d in mapped if draw(st.booleans()))
    window = {
        d: draw(st.integers(0, shape[d]))
        for d in range(rank)
        if d not in inserted and d not in batched
    }
    batch = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(batching, 2)))]
    if batching:
        batch[0] = shape[batched[0]]
    vector_at = draw(st.integers(0, len(batch)))
    implicit = len(mapped) == 1 and draw(st.booleans())
    index_shape = list(batch) if implicit else [*batch[:vector_at], len(mapped), *batch[vector_at:]]
    vector_dim = len(batch) if implicit else vector_at
    update_rank = len(batch) + len(window)
    window_dims = sorted(draw(st.permutations(range(update_rank)))[: len(window)])
    sizes, kept, scatter = [], iter(window.values()), iter(batch)
    for d in range(update_rank):
        sizes.append(next(kept) if d in window_dims else next(scatter))
    index_batching = [d for d in range(len(index_shape)) if d != vector_dim][:batching]
    combiner = draw(st.sampled_from([*COMBINERS, "argmax_pair"]))
    dtype = draw(st.sampled_from(["f32", "s32"]))
    return dict(
        shape=shape, mapped=mapped, inserted=inserted, batched=batched, index_shape=index_shape,
        vector_dim=vector_dim, sizes=sizes, window_dims=window_dims,
        index_batching=index_batching, combiner=combiner, dtype=dtype,
    )  # fmt: skip


def _dims(a):
    return ",".join(map(str, a))


def scatter_module(c):
    t, shape, sizes = c["dtype"], _dims(c["shape"]), _dims(c["sizes"])
    numbers = (
        f"update_window_dims={{{_dims(c['window_dims'])}}}, "
        f"inserted_window_dims={{{_dims(c['inserted'])}}}, "
        f"scatter_dims_to_operand_dims={{{_dims(c['mapped'])}}}, "
        f"input_batching_dims={{{_dims(c['batched'])}}}, "
        f"scatter_indices_batching_dims={{{_dims(c['index_batching'])}}}, "
        f"index_vector_dim={c['vector_dim']}"
    )
    index = f"i = s32[{_dims(c['index_shape'])}] parameter(1)"
    if c["combiner"] == "argmax_pair":  # a score and the id that carries it
        return f"""HloModule s

comb {{
  a = {t}[] parameter(0)
  ai = s32[] parameter(1)
  b = {t}[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  v = {t}[] select(gt, b, a)
  w = s32[] select(gt, bi, ai)
  ROOT r = ({t}[], s32[]) tuple(v, w)
}}

ENTRY e {{
  x = {t}[{shape}] parameter(0)
  xi = s32[{shape}] parameter(2)
  {index}
  u = {t}[{sizes}] parameter(3)
  ui = s32[{sizes}] parameter(4)
  ROOT s = ({t}[{shape}], s32[{shape}]) scatter(x, xi, i, u, ui), {numbers}, to_apply=comb
}}
"""
    body = COMBINERS[c["combiner"]].format(t=t)
    return f"""HloModule s

comb {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  {body}
}}

ENTRY e {{
  x = {t}[{shape}] parameter(0)
  {index}
  u = {t}[{sizes}] parameter(2)
  ROOT s = {t}[{shape}] scatter(x, i, u), {numbers}, to_apply=comb
}}
"""


def scatter_arguments(c, seed):
    rng = np.random.default_rng(seed)
    np_t = {"f32": np.float32, "s32": np.int32}[c["dtype"]]
    # Starts out of range too: those windows are skipped.
    i = rng.integers(-2, max(c["shape"]) + 2, c["index_shape"]).astype(np.int32)
    if c["combiner"] == "argmax_pair":
        # Distinct scores: no ties, so the order of updates does not matter.
        total = int(np.prod(c["shape"])) + int(np.prod(c["sizes"]))
        scores = rng.permutation(total).astype(np_t) - total // 2
        x = scores[: int(np.prod(c["shape"]))].reshape(c["shape"])
        u = scores[int(np.prod(c["shape"])) :].reshape(c["sizes"])
        xi = rng.integers(0, 100, c["shape"]).astype(np.int32)
        ui = rng.integers(100, 200, c["sizes"]).astype(np.int32)
        return [x, i, xi, u, ui]  # by parameter number
    x = rng.integers(-5, 5, c["shape"]).astype(np_t)
    u = rng.integers(-5, 5, c["sizes"]).astype(np_t)
    return [x, i, u]


@settings(max_examples=120, deadline=None)
@given(scatter_cases(), st.integers(0, 2**32 - 1))
def test_scatters_with_random_dimension_numbers_and_combiners_compile_like_the_evaluator(c, seed):
    module = uir.hlo.parse_module(scatter_module(c))
    args = scatter_arguments(c, seed)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    optimized = exe.module.to_text()
    if c["combiner"] != "add":  # loops (of one step: unrolled) of dynamic slices and updates
        assert " scatter(" not in optimized, optimized
    got, want = exe(*args), uir.evaluate(module, *args)
    for g, w in zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]:
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.xla
@settings(max_examples=40, deadline=None)
@given(scatter_cases(), st.integers(0, 2**32 - 1))
def test_scatters_with_random_dimension_numbers_and_combiners_compile_like_xla(c, seed):
    module = uir.hlo.parse_module(scatter_module(c))
    assert_compiled_like_xla(module, scatter_arguments(c, seed))


def test_a_combiner_of_its_own_runs_as_a_loop_of_compiled_steps():
    c = dict(
        shape=[6, 5], mapped=[0], inserted=[0], batched=[], index_shape=[7, 1], vector_dim=1,
        sizes=[7, 5], window_dims=[1], index_batching=[], combiner="sum_of_squares", dtype="f32",
    )  # fmt: skip
    module = uir.hlo.parse_module(scatter_module(c))
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == [] and exe.thunk_kinds.get("while") == 1, exe.thunk_text
    x = np.zeros((6, 5), np.float32)
    i = np.array([[0], [2], [2], [5], [-1], [6], [2]], np.int32)  # repeats; two out of range
    u = np.arange(35, dtype=np.float32).reshape(7, 5)
    want = x.copy()
    for row, (k,) in enumerate(i):
        if 0 <= k < 6:
            want[k] += u[row] ** 2
    np.testing.assert_array_equal(exe(x, i, u), want)


@pytest.mark.parametrize("n", [0, 1])
def test_no_updates_or_one_give_the_operand_or_one_step(n):
    c = dict(
        shape=[4], mapped=[0], inserted=[0], batched=[], index_shape=[n, 1], vector_dim=1,
        sizes=[n], window_dims=[], index_batching=[], combiner="double_old", dtype="s32",
    )  # fmt: skip
    module = uir.hlo.parse_module(scatter_module(c))
    x = np.arange(4, dtype=np.int32)
    i = np.full((n, 1), 2, np.int32)
    u = np.zeros(n, np.int32)
    exe = uir.compile(module, backend="cpu")
    assert exe.fallbacks == []
    np.testing.assert_array_equal(exe(x, i, u), uir.evaluate(module, x, i, u))
    np.testing.assert_array_equal(exe(x, i, u), x * np.array([1, 1, 2 if n else 1, 1]))
