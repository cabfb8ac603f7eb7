"""A data-parallel training step: the MLP classifier of the
transformations' tests, its gradient on each participant's block of the
batch averaged with pmean (shard_map over a "batch" axis), against the same
step on the whole batch in one participant. Shared by the in-process tests
and the ranks under mpirun."""

from __future__ import annotations

import itertools

import numpy as np

import uir
from uir.sharding import P

SIZES = [8, 32, 4]
BATCH = 64
RATE = 0.1


def data(seed: int = 2):
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((4, 8)).astype(np.float32) * 2
    labels = rng.integers(0, 4, BATCH)
    x = (centers[labels] + rng.standard_normal((BATCH, 8))).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[labels]
    params = [
        (
            (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
            np.zeros(b, np.float32),
        )
        for a, b in itertools.pairwise(SIZES)
    ]
    return params, x, y


def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = uir.nn.gelu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -uir.numpy.mean(uir.numpy.sum(uir.nn.log_softmax(logits) * y, axis=-1))


def _update(params, grads):
    return [(w - RATE * gw, b - RATE * gb) for (w, b), (gw, gb) in zip(params, grads, strict=True)]


@uir.jit
def whole_step(params, x, y):
    value, grads = uir.value_and_grad(loss)(params, x, y)
    return _update(params, grads), value


def sharded_step(mesh):
    """One step on `mesh`'s "batch" axis: each participant's gradient of
    its block, averaged over the axis (pmean), the same update everywhere."""

    def step(params, x, y):
        value, grads = uir.value_and_grad(loss)(params, x, y)
        grads = uir.lax.pmean(grads, "batch")
        return _update(params, grads), uir.lax.pmean(value, "batch")

    return uir.jit(
        uir.shard_map(step, mesh=mesh, in_specs=(P(), P("batch"), P("batch")), out_specs=(P(), P()))
    )


def train(step, steps: int = 50):
    params, x, y = data()
    losses = []
    for _ in range(steps):
        params, value = step(params, x, y)
        losses.append(float(value))
    return params, np.array(losses)
