"""Dot chains (dot, row-local epilogue, dot) fused by dot-chain-fusion and
run block of rows by block of rows: random chains against the evaluator,
on machine code and on the iGraph interpreter; attention's arena."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir
import uir.igraph as ig
import uir.numpy as unp
from uir._src.core.evaluate import random_arguments

REDUCERS = """
sum {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = $T[] add(a, b)
}
max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = $T[] maximum(a, b)
}
"""

EPILOGUES = ["tanh", "scale", "softmax", "relu_s", "logistic", "gate", "rownorm"]


@st.composite
def dot_chains(draw):
    """An entry computing dot(E(dot(a, b)), c) with batch dims, transposed
    operands, sizes that leave a short last block, and an epilogue E of one
    to three row-local steps (some reading a scalar parameter)."""
    t = draw(st.sampled_from(["f32", "f64"]))
    batch = draw(st.sampled_from([[], [2], [3, 2]]))
    m = draw(st.sampled_from([1, 5, 17, 64, 200, 513]))
    k = draw(st.sampled_from([1, 3, 16, 64]))
    n = draw(st.sampled_from([1, 7, 32, 130, 1000]))
    p = draw(st.sampled_from([1, 4, 33]))
    ta, tb, tc = (draw(st.booleans()) for _ in range(3))
    nb = len(batch)
    bd = ",".join(str(i) for i in range(nb))

    def shape(*dims):
        return f"{t}[{','.join(str(d) for d in [*batch, *dims])}]"

    a_shape = shape(k, m) if ta else shape(m, k)
    b_shape = shape(n, k) if tb else shape(k, n)
    c_shape = shape(p, n) if tc else shape(n, p)
    full, row = shape(m, n), shape(m)
    lines = [
        f"  a = {a_shape} parameter(0)",
        f"  b = {b_shape} parameter(1)",
        f"  c = {c_shape} parameter(2)",
        f"  s = {t}[] parameter(3)",
    ]
    counter = iter(range(1000))

    def new(text: str) -> str:
        name = f"v{next(counter)}"
        lines.append(f"  {name} = {text}")
        return name

    def splat(value: str) -> str:
        return new(f"{full} broadcast({value}), dimensions={{}}")

    def along_rows(x: str) -> str:
        return new(
            f"{full} broadcast({x}), dimensions={{{','.join(str(i) for i in range(nb + 1))}}}"
        )

    def batch_attrs(side: str) -> str:
        return f"{side}_batch_dims={{{bd}}}, " if nb else ""

    h = new(
        f"{full} dot(a, b), {batch_attrs('lhs')}lhs_contracting_dims={{{nb if ta else nb + 1}}}, "
        f"{batch_attrs('rhs')}rhs_contracting_dims={{{nb + 1 if tb else nb}}}"
    )
    steps = draw(st.lists(st.sampled_from(EPILOGUES), min_size=1, max_size=3))
    last = nb + 1
    for step in steps:
        if step in ("tanh", "logistic"):
            h = new(f"{full} {'tanh' if step == 'tanh' else 'logistic'}({h})")
        elif step == "scale":
            h = new(f"{full} multiply({h}, {splat(new(f'{t}[] constant(0.3)'))})")
        elif step == "softmax":
            mx = new(
                f"{row} reduce({h}, {new(f'{t}[] constant(-inf)')}), dimensions={{{last}}}, "
                "to_apply=max"
            )
            e = new(f"{full} exponential({new(f'{full} subtract({h}, {along_rows(mx)})')})")
            sm = new(
                f"{row} reduce({e}, {new(f'{t}[] constant(0)')}), dimensions={{{last}}}, "
                "to_apply=sum"
            )
            h = new(f"{full} divide({e}, {along_rows(sm)})")
        elif step == "relu_s":
            shifted = new(f"{full} add({h}, {splat('s')})")
            h = new(f"{full} maximum({shifted}, {splat(new(f'{t}[] constant(0)'))})")
        elif step == "gate":
            # Against a constant, not s: after relu_s many values equal s
            # exactly, and a last-place difference upstream (logistic's,
            # between kernel and evaluator) would flip the comparison. The
            # rejected values become the threshold itself, so that a value
            # within rounding of it (a dot sums in another order on BLAS)
            # comes out the same whichever way the comparison goes.
            third = splat(new(f"{t}[] constant(0.3)"))
            keep = new(
                f"pred[{','.join(str(d) for d in [*batch, m, n])}] compare({h}, {third}), "
                "direction=GT"
            )
            h = new(f"{full} select({keep}, {h}, {third})")
        elif step == "rownorm":
            sq = new(f"{full} multiply({h}, {h})")
            ss = new(
                f"{row} reduce({sq}, {new(f'{t}[] constant(0)')}), dimensions={{{last}}}, "
                "to_apply=sum"
            )
            one = new(f"{row} broadcast({new(f'{t}[] constant(1)')}), dimensions={{}}")
            h = new(f"{full} divide({h}, {along_rows(new(f'{row} add({ss}, {one})'))})")
    lines.append(
        f"  ROOT out = {shape(m, p)} dot({h}, c), {batch_attrs('lhs')}lhs_contracting_dims={{{last}}}, "
        f"{batch_attrs('rhs')}rhs_contracting_dims={{{nb + 1 if tc else nb}}}"
    )

    def module(body: list[str]) -> str:
        return (
            "HloModule chain\n"
            + REDUCERS.replace("$T", t)
            + "ENTRY main {\n"
            + "\n".join(body)
            + "\n}\n"
        )

    text = module(lines)
    # The same chain ending in dot(|E|, |c|): each output's sum of term
    # magnitudes, the scale of its rounding error (the output itself can be
    # far smaller when its terms cancel).
    root = lines[-1]
    magnitude = module(
        [
            *lines[:-1],
            f"  habs = {full} abs({h})",
            f"  cabs = {c_shape} abs(c)",
            root.replace(f"dot({h}, c)", "dot(habs, cabs)"),
        ]
    )
    batch_size = int(np.prod(batch)) if batch else 1
    reread = (k * n + n * p) * (4 if t == "f32" else 8)
    # Size-1 dims let algsimp turn a dot into a multiply or a reshape first.
    degenerate = 1 in (m, k, n, p)
    return text, {
        "reread": reread,
        "elements": batch_size * m * n,
        "type": t,
        "degenerate": degenerate,
        "magnitude": magnitude,
    }


def _assert_close(got, want, t: str, magnitude=None):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = float(np.abs(want).max()) if want.size else 0.0
    if magnitude is not None and want.size:
        scale = max(scale, float(np.abs(np.asarray(magnitude, np.float64)).max()))
    rtol = 2e-4 if t == "f32" else 1e-9
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * (scale + 1e-3))


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=dot_chains(), seed=st.integers(0, 3))
def test_random_dot_chains_run_block_by_block_like_the_evaluator(case, seed):
    text, info = case
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    assert exe.fallbacks == [], exe.fallbacks
    ops = [node.op for node in exe.kernel_graph.nodes]
    # Operands re-read per block that fit in any core's cache: always fused.
    if info["reread"] <= 64 << 10 and not info["degenerate"]:
        assert ops == ["dot-chain"], (ops, text)
    args = random_arguments(exe.module, seed)
    want = uir.evaluate(exe.module, *args)
    magnitude = uir.evaluate(uir.hlo.parse_module(info["magnitude"]), *args)
    _assert_close(exe(*args), want, info["type"], magnitude)
    if info["elements"] <= 20_000:
        _assert_close(ig.interpret(exe.kernel_graph, *args), want, info["type"], magnitude)


def _attention(q, k, v):
    s = q @ unp.swapaxes(k, -1, -2) * 0.125
    s = unp.exp(s - unp.max(s, axis=-1, keepdims=True))
    return (s / unp.sum(s, axis=-1, keepdims=True)) @ v


def test_traced_attention_needs_no_arena_and_matches_numpy():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((4, 300, 32), dtype=np.float32) for _ in range(3))
    compiled = uir.jit(_attention).lower(q, k, v).compile()
    assert [n.op for n in compiled.kernel_graph.nodes] == ["dot-chain"]
    assert compiled.buffer_assignment.arena_bytes == 0
    s = np.einsum("bmd,bnd->bmn", q.astype(np.float64), k.astype(np.float64)) * 0.125
    s = np.exp(s - s.max(-1, keepdims=True))
    want = (s / s.sum(-1, keepdims=True)) @ v.astype(np.float64)
    np.testing.assert_allclose(compiled(q, k, v), want, rtol=1e-4, atol=1e-5)


def test_a_long_sequence_runs_in_blocks_with_a_short_last_one():
    """2,053 rows of 2,053 scores: several blocks per head and a last block
    of other length, on the worker threads."""
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 2053, 16), dtype=np.float32) for _ in range(3))
    compiled = uir.jit(_attention).lower(q, k, v).compile()
    text = compiled.kernel_graph.to_text()
    assert "dot-chain(" in text and " of 2053 rows" in text
    assert " block of 2053 of 2053 rows" not in text
    want = uir.jit(_attention, backend="eval")(q, k, v)
    np.testing.assert_allclose(compiled(q, k, v), want, rtol=1e-4, atol=1e-5)


def test_a_chain_that_does_not_pay_keeps_its_intermediate():
    """An MLP whose weights are far larger than a cache would re-read them
    for every block: its dots stay apart and its hidden layer is a buffer."""
    x = np.ones((64, 2048), np.float32)
    w1 = np.full((2048, 2048), 1e-3, np.float32)
    w2 = np.full((2048, 2048), 1e-3, np.float32)
    compiled = uir.jit(lambda x, a, b: unp.tanh(x @ a) @ b).lower(x, w1, w2).compile()
    assert "dot-chain" not in [n.op for n in compiled.kernel_graph.nodes]
    np.testing.assert_allclose(compiled(x, w1, w2), np.tanh(x @ w1) @ w2, rtol=1e-5)


def test_an_output_whose_terms_cancel_is_judged_by_their_magnitude():
    # Found by the random chains: softmax weights times c summing to 8.7e-4
    # from terms near 1. f32 rounding of those terms leaves 9e-7 of error,
    # 1e-3 of the output itself but 1.5e-6 of the terms' magnitude.
    body = """  a = f32[64,1] parameter(0)
  b = f32[1000,64] parameter(1)
  c = f32[1000,1] parameter(2)
  s = f32[] parameter(3)
  v0 = f32[1,1000] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  v1 = f32[] constant(-inf)
  v2 = f32[1] reduce(v0, v1), dimensions={1}, to_apply=max
  v3 = f32[1,1000] broadcast(v2), dimensions={0}
  v4 = f32[1,1000] subtract(v0, v3)
  v5 = f32[1,1000] exponential(v4)
  v6 = f32[] constant(0)
  v7 = f32[1] reduce(v5, v6), dimensions={1}, to_apply=sum
  v8 = f32[1,1000] broadcast(v7), dimensions={0}
  v9 = f32[1,1000] divide(v5, v8)
"""
    head = "HloModule chain\n" + REDUCERS.replace("$T", "f32") + "ENTRY main {\n" + body
    text = (
        head
        + "  ROOT out = f32[1,1] dot(v9, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
    )
    magnitude = (
        head
        + "  habs = f32[1,1000] abs(v9)\n  cabs = f32[1000,1] abs(c)\n"
        + "  ROOT out = f32[1,1] dot(habs, cabs), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n"
    )
    exe = uir.compile(uir.hlo.parse_module(text), backend="cpu")
    args = random_arguments(exe.module, 1)
    want = uir.evaluate(exe.module, *args)
    terms = uir.evaluate(uir.hlo.parse_module(magnitude), *args)
    assert abs(float(want.ravel()[0])) < 1e-2 * float(terms.ravel()[0])  # the terms cancel
    _assert_close(exe(*args), want, "f32", terms)
