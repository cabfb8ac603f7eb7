"""uir.shard_map and the collectives of uir.lax, every participant a thread
of this process: the programs against NumPy (and, marked xla, against
jax.shard_map on as many CPU devices), the data-parallel training step
against the whole-batch step, the traced HLO, and the errors."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import types

import dp_training as dp
import numpy as np
import pytest
from collective_cases import cases
from shard_programs import programs

import uir
from uir._src.core.evaluate import random_arguments
from uir.sharding import P

HERE = pathlib.Path(__file__).resolve().parent
UIR_NS = types.SimpleNamespace(P=P, lax=uir.lax, np=uir.numpy)


def _close(got, want, rtol=1e-5, atol=1e-5):
    if isinstance(want, (tuple, list)):
        for g, w in zip(got, want, strict=True):
            _close(g, w, rtol, atol)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


@pytest.mark.parametrize("n", [2, 4])
def test_shard_map_programs_match_numpy(n):
    mesh = uir.sharding.make_mesh((n,), ("x",))
    for name, f, ins, outs, args, want in programs(UIR_NS, n):
        got = uir.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs)(*args)
        try:
            _close(got, want)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


@pytest.mark.parametrize("n", [2, 4])
def test_every_collective_case_in_threads_matches_the_evaluator(n):
    for name, text in cases(n):
        exe = uir.compile(uir.hlo.parse_module(text))
        assert exe.fallbacks == [], name
        args = random_arguments(exe.module, 0)
        for g, w in zip(
            exe(*args, replicas=n), uir.evaluate(exe.module, *args, replicas=n), strict=True
        ):
            # Folds run in group order in both: the same bits but for tanh.
            _close(g, w, rtol=1e-6, atol=1e-6)


def test_sharded_matmul_traces_to_partitions_with_xla_collectives():
    mesh = uir.sharding.make_mesh((4,), ("x",))
    f = uir.shard_map(
        lambda a, b: uir.lax.psum(a @ b, "x"),
        mesh=mesh,
        in_specs=(P(None, "x"), P("x", None)),
        out_specs=P(),
    )
    a = np.ones((8, 16), np.float32)
    b = np.ones((16, 4), np.float32)
    text = uir.jit(f).lower(a, b).as_text()
    assert "num_partitions=4" in text
    assert "partition-id()" in text and "dynamic-slice(" in text
    assert "all-reduce(" in text and "channel_id=" in text and "use_global_device_ids=true" in text
    np.testing.assert_allclose(uir.jit(f)(a, b), a @ b)


def test_shard_map_over_a_two_dimensional_mesh():
    mesh = uir.sharding.make_mesh((2, 3), ("a", "b"))
    x = np.arange(6 * 4, dtype=np.float32).reshape(6, 4)

    def f(x):
        rows = uir.lax.psum(x, "a")  # over the two participants sharing a column
        everything = uir.lax.psum(x.sum(), ("a", "b"))
        return rows, everything[None], uir.lax.axis_index(("a", "b"))[None]

    rows, total, ids = uir.shard_map(
        f, mesh=mesh, in_specs=P(("a", "b")), out_specs=(P("b"), P(), P(("a", "b")))
    )(x)
    blocks = x.reshape(2, 3, 4)  # [a, b, row]
    np.testing.assert_allclose(rows, blocks.sum(axis=0).reshape(3, 4))
    np.testing.assert_allclose(total, [x.sum()])
    np.testing.assert_array_equal(ids, np.arange(6))


def test_data_parallel_training_equals_the_whole_batch_step():
    whole_params, whole = dp.train(dp.whole_step)
    for n in (2, 4):
        params, losses = dp.train(dp.sharded_step(uir.sharding.make_mesh((n,), ("batch",))))
        _close(losses, whole)
        _close(params, whole_params)
    assert whole[-1] < 0.5 * whole[0]


def test_collectives_outside_shard_map_name_the_unbound_axis():
    with pytest.raises(NameError, match="unbound axis name: x"):
        uir.jit(lambda v: uir.lax.psum(v, "x"))(np.ones(3, np.float32))
    mesh = uir.sharding.make_mesh((2,), ("x",))
    with pytest.raises(NameError, match="unbound axis name: y"):
        uir.shard_map(lambda v: uir.lax.psum(v, "y"), mesh=mesh, in_specs=P(), out_specs=P())(
            np.ones(3, np.float32)
        )


def test_a_block_that_does_not_divide_is_an_error():
    mesh = uir.sharding.make_mesh((4,), ("x",))
    f = uir.shard_map(lambda v: v, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match=r"splits dimension 0 \(6\) over \('x',\) \(4"):
        f(np.ones(6, np.float32))


def test_mesh_checks_its_devices():
    with pytest.raises(ValueError, match=r"participants 0\.\.2 once each"):
        uir.sharding.Mesh([0, 0, 2], ("x",))
    with pytest.raises(ValueError, match="axis names"):
        uir.sharding.Mesh(np.arange(4).reshape(2, 2), ("x",))
    mesh = uir.sharding.Mesh(uir.devices("cpu"), ("x",))
    assert mesh.shape == {"x": uir.process_count()}


_JAX_SCRIPT = """
import json, os, sys, types
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
sys.path.insert(0, {here!r})
import numpy as np, jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P
from shard_programs import programs
jax.config.update("jax_enable_x64", False)
ns = types.SimpleNamespace(P=P, lax=jax.lax, np=jnp)
out = {{}}
for n in (2, 4):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:n]), ("x",))
    for name, f, ins, outs, args, _ in programs(ns, n):
        got = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs,
                                    check_vma=False))(*args)
        leaves = jax.tree_util.tree_leaves(got)
        out[f"{{n}}/{{name}}"] = [np.asarray(v).tolist() for v in leaves]
print(json.dumps(out))
"""


@pytest.mark.xla
def test_shard_map_programs_equal_jax_shard_map():
    """The same programs through jax.shard_map on 4 forced CPU devices (in
    a process of their own: the device count is read at JAX's start)."""
    pytest.importorskip("jax")
    p = subprocess.run(
        [sys.executable, "-c", _JAX_SCRIPT.format(here=str(HERE))],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=dict(os.environ),
    )
    assert p.returncode == 0, p.stderr
    theirs = json.loads(p.stdout.strip().splitlines()[-1])
    for n in (2, 4):
        mesh = uir.sharding.make_mesh((n,), ("x",))
        for name, f, ins, outs, args, _ in programs(UIR_NS, n):
            mine = uir.shard_map(f, mesh=mesh, in_specs=ins, out_specs=outs)(*args)
            leaves = list(mine) if isinstance(mine, tuple) else [mine]
            _close(leaves, [np.asarray(v, np.float32) for v in theirs[f"{n}/{name}"]])


def test_shard_map_over_devices_in_any_order_and_no_fallbacks():
    """A mesh whose devices are not in row-major order reads each
    participant's place from a table; either way the program compiles
    whole (the block's dynamic slice included)."""
    x = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    for devices in ([0, 1, 2, 3], [2, 0, 3, 1]):
        mesh = uir.sharding.Mesh(np.array(devices), ("x",))
        f = uir.shard_map(
            lambda v: (v * 2, uir.lax.axis_index("x")[None]),
            mesh=mesh,
            in_specs=P("x"),
            out_specs=(P("x"), P("x")),
        )
        doubled, places = f(x)
        np.testing.assert_array_equal(doubled, x * 2)
        np.testing.assert_array_equal(places, np.arange(4))
        assert uir.jit(f).lower(x).compile().fallbacks == []
    step = dp.sharded_step(uir.sharding.make_mesh((2,), ("batch",)))
    params, xs, ys = dp.data()
    assert step.lower(params, xs, ys).compile().fallbacks == []
