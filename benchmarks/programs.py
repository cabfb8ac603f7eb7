"""Ordinary programs beside jax.jit: uir's time over XLA:CPU's on each.

Each program is written once against a JAX-like namespace pair (numpy,
lax) and run as jax.jit and uir.jit on the same inputs in this process,
after checking that both agree. A ratio above 1 is uir slower. The column
`fallbacks` counts the nodes uir runs on its reference evaluator (none is
the goal: every op as code of the runtime's own)."""

from __future__ import annotations

import statistics
import time

import numpy as np


def cnn(np_, lax, x, k1, k2):
    """Conv 3x3 (NHWC) + ReLU + max-pool 2x2, twice, then a mean."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
    h = np_.maximum(h, 0.0)
    h = lax.reduce_window(h, -np_.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = lax.conv_general_dilated(h, k2, (1, 1), "SAME", dimension_numbers=dn)
    h = np_.maximum(h, 0.0)
    h = lax.reduce_window(h, -np_.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return np_.mean(h, axis=(1, 2))


def resnet_block(np_, lax, x, k, gamma, beta):
    """Conv 3x3 (NHWC), batch norm over the batch, ReLU, max-pool 2x2."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=dn)
    mean = h.mean(axis=(0, 1, 2))
    var = ((h - mean) ** 2).mean(axis=(0, 1, 2))
    h = (h - mean) / np_.sqrt(var + 1e-5) * gamma + beta
    h = np_.maximum(h, 0.0)
    return lax.reduce_window(h, -np_.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def depthwise(np_, lax, x, k):
    """A depthwise 3x3 convolution (feature groups = channels)."""
    return lax.conv_general_dilated(
        x,
        k,
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=x.shape[-1],
    )


def rnn(np_, lax, xs, w, u):
    """An Elman RNN over 64 steps with lax.scan."""

    def step(h, x):
        h = np_.tanh(x @ w + h @ u)
        return h, h

    _, hs = lax.scan(step, np_.zeros((xs.shape[1], u.shape[0]), xs.dtype), xs)
    return hs.sum(axis=0)


def kmeans(np_, lax, x, c):
    """Five Lloyd steps: distances, argmin, means by one-hot matmul."""
    for _ in range(5):
        d = (x * x).sum(1)[:, None] - 2 * x @ c.T + (c * c).sum(1)[None, :]
        a = np_.argmin(d, axis=1)
        onehot = (a[:, None] == np_.arange(c.shape[0])[None, :]).astype(x.dtype)
        c = (onehot.T @ x) / np_.maximum(onehot.sum(0)[:, None], 1.0)
    return c


def cross_entropy(np_, lax, logits, labels):
    """Softmax cross-entropy with integer labels, and the accuracy."""
    m = logits.max(axis=1, keepdims=True)
    lse = np_.log(np_.exp(logits - m).sum(axis=1)) + m[:, 0]
    picked = np_.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    acc = (np_.argmax(logits, axis=1) == labels).mean()
    return (lse - picked).mean() + acc


def newton(np_, lax, x):
    """Square roots by 30 Newton steps in a fori_loop."""
    return lax.fori_loop(0, 30, lambda i, y: 0.5 * (y + x / y), np_.ones_like(x))


def topk(np_, lax, x):
    """The 16 largest of each row."""
    return lax.top_k(x, 16)[0]


def cumsums(np_, lax, x):
    """Cumulative sums along both axes."""
    return np_.cumsum(x, axis=0) + np_.cumsum(x, axis=1)


def pooling(np_, lax, x):
    """Max-pool 3x3 stride 2 and average-pool 2x2, NHWC."""
    m = lax.reduce_window(x, -np_.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    a = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4
    return m.sum() + a.sum()


def gather_rows(np_, lax, table, idx):
    """Embedding lookup and a scatter-add of the rows back."""
    rows = table[idx]
    return np_.zeros_like(table).at[idx].add(rows * 2.0)


def median(np_, lax, x):
    """The median of each row by sorting."""
    return np_.sort(x, axis=1)[:, x.shape[1] // 2]


def argmax_rows(np_, lax, x):
    """argmax over the rows of 4096x4096."""
    return np_.argmax(x, axis=1)


def max_rows(np_, lax, x):
    """max over the rows of 4096x4096 (argmax's yardstick)."""
    return np_.max(x, axis=1)


def cumsum_1m(np_, lax, x):
    """cumsum of 1M floats."""
    return np_.cumsum(x)


def _inputs(rng):
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {
        cnn: (f(8, 32, 32, 3), f(3, 3, 3, 16) * 0.3, f(3, 3, 16, 32) * 0.1),
        resnet_block: (f(8, 32, 32, 64), f(3, 3, 64, 64) * 0.05, f(64) + 1.0, f(64)),
        depthwise: (f(8, 56, 56, 64), f(3, 3, 1, 64) * 0.3),
        rnn: (f(64, 32, 128), f(128, 128) * 0.08, f(128, 128) * 0.08),
        kmeans: (f(4096, 16), f(8, 16)),
        cross_entropy: (f(1024, 1000), rng.integers(0, 1000, 1024).astype(np.int32)),
        newton: (np.abs(f(4096)) + 0.5,),
        topk: (f(256, 1024),),
        cumsums: (f(1024, 1024),),
        pooling: (f(8, 64, 64, 32),),
        gather_rows: (f(10000, 64), rng.integers(0, 10000, 4096).astype(np.int32)),
        median: (f(512, 1001),),
        argmax_rows: (f(4096, 4096),),
        max_rows: (f(4096, 4096),),
        cumsum_1m: (f(1 << 20),),
    }


def _median_ms(fn, min_time=0.3, most=50) -> float:
    fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < min_time and len(samples) < most):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e3


def _agree(a, b) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = float(np.max(np.abs(b))) if b.size else 0.0
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=2e-3, atol=2e-3 * scale))


def run(names: list[str] | None = None) -> list[dict]:
    import jax
    import jax.numpy as jnp
    from jax import lax as jlax

    import uir
    import uir.numpy as unp
    from uir import lax as ulax

    jax.config.update("jax_platforms", "cpu")
    rows = []
    for fn, args in _inputs(np.random.default_rng(0)).items():
        if names and fn.__name__ not in names:
            continue
        row: dict[str, object] = {"program": fn.__name__}
        jf = jax.jit(lambda *a, fn=fn: fn(jnp, jlax, *a))
        uf = uir.jit(lambda *a, fn=fn: fn(unp, ulax, *a))
        want = np.asarray(jf(*args))
        try:
            got = uf(*args)
            compiled = uf.lower(*args).compile()
        except Exception as e:  # a program uir cannot run yet is a row, not a crash
            row["status"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
            rows.append(row)
            continue
        row["fallbacks"] = len(compiled.fallbacks)
        if not _agree(got, want):
            row["status"] = "disagrees with jax.jit"
            rows.append(row)
            continue
        jax_args = [jnp.asarray(a) for a in args]
        t_jax = _median_ms(lambda jf=jf, a=jax_args: jf(*a).block_until_ready())
        t_uir = _median_ms(lambda uf=uf, a=args: uf(*a))
        row.update(jax_ms=t_jax, uir_ms=t_uir, uir_over_jax=t_uir / t_jax, status="ok")
        rows.append(row)
    return rows


if __name__ == "__main__":
    import sys

    sys.path.insert(0, __import__("os").path.dirname(__file__))
    from run import print_table

    print_table(run(sys.argv[1:] or None))
