"""Fusion on traced models: how many kernels the default pipeline leaves, and
that they compute what the unfused program computes (NumPy as reference)."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.nn as nn
import uir.numpy as jnp

ELEMENTWISE = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "exponential", "tanh",
    "negate", "sqrt", "rsqrt", "power", "select", "compare", "convert", "log", "abs",
}  # fmt: skip


def softmax(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def gelu_dense(x, w, b):
    return nn.gelu(x @ w + b)


def mlp(x, w1, b1, w2, b2):
    return nn.relu(x @ w1 + b1) @ w2 + b2


def kernels(module) -> list:
    """The entry's instructions that would run as kernels."""
    skip = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}
    return [i for i in module.entry.instructions if i.opcode not in skip]


def fused_opcodes(fusion) -> list[str]:
    return [i.opcode for i in fusion.called_computations[0].instructions]


def compiled(fn, *args):
    return uir.jit(fn).lower(*args).compile()


def rng_arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("shape", [(8, 16), (64, 1000), (3, 5, 128)])
def test_softmax_is_one_fusion(shape):
    (x,) = rng_arrays(shape)
    c = compiled(softmax, x)
    ks = kernels(c.module)
    assert [k.opcode for k in ks] == ["fusion"], c.module.to_text()
    assert ks[0].attributes["kind"] == "kInput"
    assert fused_opcodes(ks[0]).count("reduce") == 2
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(c(x), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(8, 16), (32, 768)])
def test_layer_norm_is_one_fusion(shape):
    x, g, b = rng_arrays(shape, shape[-1:], shape[-1:])
    c = compiled(layer_norm, x, g, b)
    ks = kernels(c.module)
    assert [k.opcode for k in ks] == ["fusion"], c.module.to_text()
    assert fused_opcodes(ks[0]).count("reduce") == 2
    mu = x.mean(-1, keepdims=True)
    want = (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b
    np.testing.assert_allclose(c(x, g, b), want, rtol=1e-4, atol=1e-4)


def test_gelu_dense_is_one_dot_with_its_epilogue():
    x, w, b = rng_arrays((8, 16), (16, 32), (32,))
    c = compiled(gelu_dense, x, w, b)
    ks = kernels(c.module)
    assert [k.opcode for k in ks] == ["fusion"], c.module.to_text()
    assert ks[0].attributes["kind"] == "kOutput"
    ops = fused_opcodes(ks[0])
    assert ops.count("dot") == 1 and "tanh" in ops
    y = x @ w + b
    want = 0.5 * y * (1 + np.tanh(np.sqrt(2 / np.pi) * (y + 0.044715 * y**3)))
    np.testing.assert_allclose(c(x, w, b), want, rtol=1e-4, atol=1e-5)


def test_two_layer_mlp_has_no_standalone_elementwise_kernel():
    x, w1, b1, w2, b2 = rng_arrays((8, 16), (16, 32), (32,), (32, 4), (4,))
    c = compiled(mlp, x, w1, b1, w2, b2)
    ks = kernels(c.module)
    assert not [k for k in ks if k.opcode in ELEMENTWISE], c.module.to_text()
    assert [k.attributes["kind"] for k in ks] == ["kOutput", "kOutput"]
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(c(x, w1, b1, w2, b2), want, rtol=1e-4, atol=1e-5)


def test_explain_fusion_reports_softmax_decisions():
    (x,) = rng_arrays((8, 128))
    report = uir.passes.explain_fusion(uir.jit(softmax).lower(x).module, machine="reference")
    assert report.fused and not report.rejected
    ops = {d.producer_op for d in report.fused}
    assert {"reduce", "subtract", "broadcast"} <= ops
    assert any(d.producer_op == "reduce" and d.kind == "kInput" for d in report.fused)
    for d in report.fused:
        assert d.seconds_fused <= d.seconds_unfused
        assert d.bytes_saved > 0
    assert "fused into" in str(report) and "machine:" in str(report)
    assert [k.opcode for k in kernels(report.module)] == ["fusion"]


def test_explain_fusion_names_the_rule_that_stopped_a_fusion():
    # A column reduction broadcast back: the consumer cannot take it.
    (x,) = rng_arrays((16, 32))
    report = uir.passes.explain_fusion(
        uir.jit(lambda x: x / jnp.sum(x, axis=0)).lower(x).module, machine="reference"
    )
    (stopped,) = [d for d in report.rejected if d.producer_op.startswith(("reduce", "fusion"))]
    assert "not the minor ones" in stopped.rule
    # A reduction used twice is not duplicated.
    report = uir.passes.explain_fusion(
        uir.jit(lambda x: (jnp.sum(x, axis=1) * 2, jnp.exp(jnp.sum(x, axis=1)))).lower(x).module,
        machine="reference",
    )
    assert any("never computed twice" in d.rule for d in report.rejected), str(report)


def test_row_that_does_not_fit_fast_memory_stays_split():
    machine = uir.passes.machine_model("reference")
    row = machine["fast_memory_bytes"] // 4 + 1024  # floats: one row alone is too big
    text = f"""HloModule big
sum {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}}
ENTRY main {{
  x = f32[2,{row}] parameter(0)
  zero = f32[] constant(0)
  s = f32[2] reduce(x, zero), dimensions={{1}}, to_apply=sum
  sb = f32[2,{row}] broadcast(s), dimensions={{0}}
  ROOT out = f32[2,{row}] divide(x, sb)
}}
"""
    report = uir.passes.explain_fusion(uir.hlo.parse_module(text), machine="reference")
    assert any("do not fit the fast memory" in d.rule for d in report.rejected), str(report)
    assert len(kernels(report.module)) == 2


def test_machine_models():
    host = uir.passes.machine_model()
    ref = uir.passes.machine_model("reference")
    assert ref["l2_bytes"] == 2 << 20 and ref["cores"] == 2
    assert host["cores"] >= 1 and host["l2_bytes"] > 0 and host["vector_bytes"] in (16, 32, 64)
    with pytest.raises(ValueError, match="unknown machine"):
        uir.passes.machine_model("nope")


def _sliced_max_chain(rows: int, cols: int, parts: int) -> str:
    """max(|x|) over `parts` column blocks of a [rows, cols] parameter, as a
    chain of maximums over slices (what a custom reducer expands to)."""
    width = cols // parts
    lines = [f"  p = f32[{rows},{cols}]{{1,0}} parameter(0)"]
    acc = None
    for k in range(parts):
        lines.append(
            f"  slice{k} = f32[{rows},{width}]{{1,0}} slice(p), "
            f"slice={{[0:{rows}], [{k * width}:{(k + 1) * width}]}}"
        )
        lines.append(f"  abs{k} = f32[{rows},{width}]{{1,0}} abs(slice{k})")
        if acc is not None:
            lines.append(f"  max{k} = f32[{rows},{width}]{{1,0}} maximum({acc}, abs{k})")
        acc = f"max{k}" if acc is not None else f"abs{k}"
    lines[-1] = "  ROOT " + lines[-1].lstrip()
    body = "\n".join(lines)
    return f"HloModule sliced\nENTRY e {{\n{body}\n}}\n"


@pytest.mark.parametrize("cols", [200_000, 800_000])
def test_slices_of_a_big_input_fuse_into_one_kernel(cols):
    # 16 slices of an input larger than L2, each abs'd and folded by maximum:
    # each kernel of a split would be small enough to count as
    # cache-resident, the whole not. A producer with one user still fuses
    # (it duplicates nothing and saves its intermediate), and a sliced input
    # counts the bytes of its slices only.
    module = uir.hlo.parse_module(_sliced_max_chain(4, cols, 16))
    report = uir.passes.explain_fusion(module, simplify=False, machine="reference")
    assert [k.opcode for k in kernels(report.module)] == ["fusion"], str(report)
    assert not report.rejected, str(report)
    # The first slice's fusion reads 1/16 of the input, not all of it.
    first = next(d for d in report.fused if d.producer == "slice0")
    assert first.bytes_saved < 4 * cols * 4 / 2, str(report)
    x = np.random.default_rng(0).standard_normal((4, cols)).astype(np.float32)
    want = np.max(np.abs(x.reshape(4, 16, cols // 16)), axis=1)
    np.testing.assert_array_equal(uir.evaluate(report.module, x), want)
