"""shard_map programs with explicit collectives, each with NumPy's answer
on the same inputs: run as threads of one process by the in-process
tests, one participant per process by the ranks under mpirun, and beside
jax.shard_map by the tests against JAX. `programs(ns, n)` builds them
against a namespace (uir's or JAX's) for a mesh of n devices."""

from __future__ import annotations

import numpy as np


def _inputs(seed: int, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def programs(ns, n: int):
    """[(name, f, in_specs, out_specs, args, numpy_result)] for a 1-D mesh
    ("x", n); f uses ns.lax's collectives, ns.np's array functions."""
    P = ns.P
    lax, jnp = ns.lax, ns.np
    out = []

    a, b = _inputs(0, (8, 4 * n), (4 * n, 5))
    out.append(
        (
            "matmul_psum",
            lambda a, b: lax.psum(a @ b, "x"),
            (P(None, "x"), P("x", None)),
            P(),
            (a, b),
            a @ b,
        )
    )

    (x,) = _inputs(1, (2 * n, 3))

    def ring(x):
        parts, cur = [x], x
        for _ in range(n - 1):
            cur = lax.ppermute(cur, "x", [(i, (i + 1) % n) for i in range(n)])
            parts.append(cur)
        # parts[k] came from k places back along the ring: put them in order.
        idx = lax.axis_index("x")
        stacked = jnp.stack(parts)
        order = (idx - jnp.arange(n)) % n
        return jnp.zeros_like(stacked).at[order].set(stacked).reshape(-1, 3)

    out.append(
        (
            "ring_all_gather",
            ring,
            (P("x"),),
            P(None),
            (x,),
            x,
        )
    )
    out.append(
        (
            "all_gather_stacked",
            lambda x: lax.all_gather(x, "x"),
            (P("x"),),
            P(None),
            (x,),
            x.reshape(n, 2, 3),
        )
    )
    out.append(
        (
            "all_gather_tiled_axis1",
            lambda x: lax.all_gather(x, "x", axis=1, tiled=True),
            (P("x"),),
            P(None),
            (x,),
            np.concatenate(np.split(x, n, axis=0), axis=1),
        )
    )
    (y,) = _inputs(2, (n, 4 * n))
    # Each participant holds a row; psum_scatter leaves it the sum's block.
    out.append(
        (
            "psum_scatter",
            lambda y: lax.psum_scatter(y[0], "x", scatter_dimension=0, tiled=True),
            (P("x"),),
            P("x"),
            (y,),
            y.sum(axis=0),
        )
    )
    (z,) = _inputs(3, (n * n, 2))
    # all_to_all: block j of participant i goes to participant j.
    out.append(
        (
            "all_to_all",
            lambda z: lax.all_to_all(z, "x", 0, 0, tiled=True),
            (P("x"),),
            P("x"),
            (z,),
            z.reshape(n, n, 2).transpose(1, 0, 2).reshape(n * n, 2),
        )
    )
    out.append(
        (
            "axis_index_pmax_pmean",
            lambda x: (
                lax.axis_index("x")[None] * 1.0 + lax.pmax(x.max(), "x") + 0 * x.sum(),
                lax.pmean(x, "x"),
            ),
            (P("x"),),
            (P("x"), P()),
            (x,),
            (np.arange(n, dtype=np.float32) + x.max(), x.reshape(n, 2, 3).mean(axis=0)),
        )
    )
    return out
