"""Lowering optimized HLO to a Kernel Graph of iGraphs: every kernel verifies,
prints and parses back, and the Kernel Graph's interpreter agrees with the
reference evaluator."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.igraph as ig
import uir.numpy as unp


def softmax(x):
    m = unp.max(x, axis=-1, keepdims=True)
    e = unp.exp(x - m)
    return e / unp.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = unp.mean(x, axis=-1, keepdims=True)
    v = unp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / unp.sqrt(v + 1e-5) * g + b


def mlp(x, w1, b1, w2, b2):
    h = unp.maximum(x @ w1 + b1, 0.0)
    return unp.tanh(h @ w2 + b2)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _f32(*shape, seed=0):
    return _rng(seed).standard_normal(shape).astype(np.float32)


# (name, function, arguments): elementwise work of several ranks, broadcasts,
# transposes, reshapes, slices, concatenates, pads, iota, select, compare,
# convert, row, column and full reductions, softmax and layer norm.
CASES = [
    ("add_broadcast_rank3", lambda x, y: x * 2.0 + y, (_f32(3, 5, 7), _f32(7, seed=1))),
    ("outer_broadcast", lambda x, y: x[:, None] - y[None, :], (_f32(13), _f32(11, seed=1))),
    ("transpose_add", lambda x: x.T + 1.0, (_f32(37, 29),)),
    ("transpose_rank3", lambda x: unp.transpose(x, (2, 0, 1)) * 3.0, (_f32(4, 6, 10),)),
    ("reshape_exp", lambda x: unp.exp(x.reshape(6, 35)), (_f32(5, 42),)),
    ("slice_reverse", lambda x: x[1:9:2, ::-1] * x[0:4, :], (_f32(10, 17),)),
    (
        "concatenate",
        lambda x, y: unp.concatenate([x, y * 2.0], axis=1),
        (_f32(6, 5), _f32(6, 3, seed=1)),
    ),
    (
        "concat_rows",
        lambda x, y: unp.sin(unp.concatenate([x, y], axis=0)),
        (_f32(3, 8), _f32(5, 8, seed=1)),
    ),
    ("pad", lambda x: unp.pad(x, ((1, 2), (3, 0))) + 1.0, (_f32(4, 5),)),
    ("iota_select", lambda x: unp.where(unp.arange(31) % 3 == 0, x, -x), (_f32(31),)),
    ("convert_compare", lambda x: (x > 0.25).astype(np.int32) + x.astype(np.int32), (_f32(9, 4),)),
    ("clip", lambda x: unp.clip(x, -0.5, 0.5), (_f32(19, 3),)),
    ("row_sum", lambda x: unp.sum(x * x, axis=1), (_f32(23, 41),)),
    ("column_sum", lambda x: unp.sum(x, axis=0), (_f32(53, 7),)),
    ("middle_max", lambda x: unp.max(x, axis=1), (_f32(4, 9, 6),)),
    ("full_sum", lambda x: unp.sum(x), (_f32(17, 13),)),
    ("long_row_sum", lambda x: unp.sum(x, axis=-1), (_f32(3, 40009),)),
    ("prime_sizes", lambda x: unp.tanh(x) * 0.5, (_f32(1009),)),
    (
        "int_ops",
        lambda x, y: (x * y) % 7 + (x >> 1),
        (np.arange(60, dtype=np.int32).reshape(6, 10), np.full((6, 10), 3, np.int32)),
    ),
    ("softmax", softmax, (_f32(32, 1024),)),
    ("softmax_odd", softmax, (_f32(7, 129),)),
    ("layer_norm", layer_norm, (_f32(32, 1024), _f32(1024, seed=1), _f32(1024, seed=2))),
    (
        "mlp",
        mlp,
        (_f32(8, 16), _f32(16, 32, seed=1), _f32(32, seed=2), _f32(32, 8, seed=3), _f32(8, seed=4)),
    ),
    ("logsumexp", lambda x: unp.log(unp.sum(unp.exp(x - 1.0), axis=1)) + 1.0, (_f32(6, 33),)),
    ("cumsum_free_bf16", lambda x: (x.astype(unp.bfloat16) * 2).astype(np.float32), (_f32(5, 9),)),
]


def _compiled(fn, args):
    return uir.jit(fn).lower(*args).compile()


def _assert_close(got, want, atol=4e-6):
    # atol: a few ulps of 1, as the kernels sum in another order than the
    # evaluator's pairwise sums (a normalized value near zero keeps the
    # rounding of its mean).
    if isinstance(want, tuple):
        for g, w in zip(got, want, strict=True):
            _assert_close(g, w, atol)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("hardware", ["cpu", "gpu"])
def test_kernel_graph_runs_like_the_evaluator(name, fn, args, hardware):
    c = _compiled(fn, args)
    kg = ig.lower(c.module, hardware)
    assert kg.count("fallback") == 0, kg.to_text()
    for node in kg.nodes:
        for g in node.igraphs:
            g.verify()
            assert ig.parse(g.to_text()) == g
    _assert_close(ig.interpret(kg, *args), uir.evaluate(c.module, *args))


def test_softmax_reads_its_input_once_and_writes_its_output_once():
    x = _f32(32, 1024)
    kg = ig.lower(_compiled(softmax, (x,)).module)
    [node] = [n for n in kg.nodes if n.kind == "kernel"]
    read = sum(g.dram_bytes_read() for g in node.igraphs)
    written = sum(g.dram_bytes_written() for g in node.igraphs)
    assert (read, written) == (x.nbytes, x.nbytes)
    text = kg.to_text()
    assert "reduce.max.row.unit.fp32" in text and "reduce.add.row.unit.fp32" in text
    assert "broadcast.row.unit.fp32" in text


def test_layer_norm_reads_each_input_once():
    x, g, b = _f32(32, 1024), _f32(1024, seed=1), _f32(1024, seed=2)
    kg = ig.lower(_compiled(layer_norm, (x, g, b)).module)
    [node] = [n for n in kg.nodes if n.kind == "kernel"]
    read = sum(p.dram_bytes_read() for p in node.igraphs)
    rows = sum(p.num_parallel * p.num_loop for p in node.igraphs)
    # x once; gamma and beta once per tile of rows.
    assert read == x.nbytes + rows * (g.nbytes + b.nbytes)


def test_mlp_dots_are_library_nodes_and_epilogues_lower():
    # Each dense layer: the dot is a library call writing the output, and
    # its bias and activation an iGraph finishing that output in place.
    args = CASES[[c[0] for c in CASES].index("mlp")][2]
    c = _compiled(mlp, args)
    kg = ig.lower(c.module)
    layers = [n for n in kg.nodes if n.kind == "library"]
    assert [n.op for n in layers] == ["dot+epilogue", "dot+epilogue"]
    assert kg.count("fallback") == 0
    text = kg.to_text()
    assert "binary.max.fp32" in text and "unary.tanh.fp32" in text
    assert "dot writes the output; the epilogue finishes it in place" in text
    for node in layers:
        [g] = node.igraphs
        assert g.dram_bytes_written() == node.outputs[0]["bytes"]
    _assert_close(ig.interpret(kg, *args), uir.evaluate(c.module, *args))


def test_unlowerable_fusions_fall_back_with_their_reason():
    # A gather of rows runs on the buffers (a library node); the square
    # root of complex values does not lower yet and runs on the evaluator,
    # saying so.
    text = """HloModule g
ENTRY e {
  x = f32[8,4] parameter(0)
  i = s32[3] parameter(1)
  g = f32[3,4] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
  b = c64[3,4] convert(g)
  ROOT s = c64[3,4] sqrt(b)
}
"""
    m = uir.hlo.parse_module(text)
    kg = ig.lower(m)
    assert kg.count("fallback") == 1 and kg.count("library") == 1
    assert "// evaluator: complex values (%s" in kg.to_text()
    x = _f32(8, 4)
    i = np.array([7, 0, 3], np.int32)
    out = uir.passes.default_pipeline().run(m)
    np.testing.assert_array_equal(ig.interpret(kg, x, i), uir.evaluate(out, x, i))
    np.testing.assert_allclose(
        ig.interpret(kg, x, i), np.sqrt(x[i].astype(np.complex64)), rtol=1e-6
    )


def test_nodes_show_their_kind_and_igraph():
    x = _f32(16, 64)
    kg = ig.lower(_compiled(softmax, (x,)).module, "reference-cpu")
    [node] = kg.nodes
    assert node.kind == "kernel" and node.igraph == node.igraphs[0]
    # 16 rows of 64 in tiles of 4 rows: enough tiles for twice the 2 cores.
    assert (node.igraph.num_parallel, node.igraph.num_loop) == (4, 1)
    assert node.igraph.index_vars == [("r0", 4, "parallel")]
    assert repr(node) == "KernelNode(kernel %fusion.1, 1 iGraphs)"
    assert node.igraph.hardware == kg.hardware == ig.hardware("reference-cpu")
    library = ig.lower(uir.make_hlo(lambda a, b: a @ b)(_f32(4, 4), _f32(4, 4))).nodes[0]
    assert library.kind == "library" and library.igraph is None


def test_lower_needs_no_prepared_module_and_leaves_it_alone():
    m = uir.make_hlo(softmax)(_f32(4, 8))
    before = m.to_text()
    kg = ig.lower(m)
    assert m.to_text() == before
    assert kg.count("kernel") == 1


def test_unknown_hardware_is_a_clear_error():
    m = uir.make_hlo(softmax)(_f32(4, 8))
    with pytest.raises(ValueError, match="unknown hardware model 'tpu'"):
        ig.lower(m, "tpu")


@pytest.mark.parametrize(
    "fn,args",
    [
        (softmax, (_f32(6, 8192),)),
        (layer_norm, (_f32(3, 8192), _f32(8192, seed=1), _f32(8192, seed=2))),
    ],
    ids=["softmax", "layer_norm"],
)
def test_long_rows_split_over_a_gpu_group_reduce_at_group_scope(fn, args):
    # A row of 8192 floats does not fit one warp's registers with the values
    # the fusion keeps: the 4 warps of a block take a quarter each, reduce
    # together through shared memory and broadcast the result back.
    c = _compiled(fn, args)
    kg = ig.lower(c.module, "gpu")
    assert kg.count("fallback") == 0, kg.to_text()
    text = kg.to_text()
    assert "row.group.fp32" in text and "groupSize=4" in text
    [node] = [n for n in kg.nodes if n.kind == "kernel"]
    for g in node.igraphs:
        g.verify()
        assert g.num_parallel % 4 == 0
        assert ig.parse(g.to_text()) == g
    # Partial sums per warp add up in another order than the evaluator's.
    _assert_close(ig.interpret(kg, *args), uir.evaluate(c.module, *args), atol=1e-4)


def test_compiled_functions_have_a_kernel_graph_and_dumps_write_it(tmp_path):
    x = _f32(16, 64)
    c = _compiled(softmax, (x,))
    assert c.kernel_graph.count("kernel") == 1
    np.testing.assert_allclose(ig.interpret(c.kernel_graph, x), c(x), rtol=1e-6)
    uir.passes.default_pipeline().run(uir.jit(softmax).lower(x).module, dump_to=tmp_path)
    (path,) = tmp_path.glob("*.kernel-graph.txt")
    assert "reduce.max.row.unit.fp32" in path.read_text()


def test_a_pad_read_through_a_reshape_is_computed_into_scratch_first():
    # packbits: pad to whole bytes, then a reshape folds two dims into the
    # padded one's index, so the pad's pieces are no boxes of the reader's
    # iteration space.
    x = (np.arange(2 * 13) % 3 == 0).reshape(2, 13)
    f = uir.jit(lambda v: unp.packbits(v, axis=1))
    compiled = f.lower(x).compile()
    assert compiled.fallbacks == [], compiled.fallbacks
    np.testing.assert_array_equal(compiled(x), np.packbits(x, axis=1))


@pytest.mark.slow
@pytest.mark.parametrize("sram", [262144, 32768])
def test_tiles_of_several_types_shrink_until_they_fit_fast_memory(sram):
    # A binomial sampler's loop body is one elementwise fusion mixing f32,
    # s32, u32 and pred values over 20000 elements; a tile freed by a value
    # of one type is not reused by another, so counting the values live at
    # once undercounted the tiles, and hosts with 512 KiB of L2 (fast memory
    # 256 KiB) got an iGraph that failed verification.
    import uir.random as ur

    key = np.asarray(ur.PRNGKey(2))
    f = lambda k: ur.binomial(k, np.float32(8), np.float32(0.3), shape=(20000,))  # noqa: E731
    module = uir.jit(f).lower(key).module
    hw = ig.hardware("reference-cpu")
    hw.sram_bytes = sram
    kg = ig.lower(module, hw)
    assert kg.count("fallback") == 0
    got = np.asarray(kg.interpret([key]))
    np.testing.assert_array_equal(got, np.asarray(uir.evaluate(module, key)))
