"""Training: gradients beside jax.jit(jax.grad(...)) in one process.

- speed: the MLP block's training step (256x1024 -> 4096 -> 1024 with GELU:
  forward, backward and an SGD update of the four parameters) and
  attention's backward pass (seq 512, 8 heads, d 64: the gradient of
  <attention(q, k, v), ct> by q, k and v), each as uir.jit and jax.jit on
  the same inputs. The frameworks take turns, round after round, and each
  keeps its fastest call (these machines' speed drifts from one minute to
  the next). Flops are the products' (2mnk each); the fraction is of the
  FMA loop's peak measured in this run.
- compile: uir.jit(...).lower(...).compile() of each gradient beside
  jax.jit's, caches cleared.
- memory: the temporaries of the gradient of a deep MLP (8 layers of
  gelu(h @ w), h 256x1024, w 1024x1024) and of a scan RNN (64 steps), with no
  checkpoint, with each layer (step) under checkpoint, and (uir) with the
  rematerializer given the lowest of 1/2, 5/8, 3/4, 7/8 of the peak it can
  reach: uir's memory_analysis().temp_size_in_bytes beside XLA's. (XLA's
  buffer assignment may place temporaries in the output buffers, which
  it does not count as temporaries; uir's arena does not share them.)

    .venv/bin/python benchmarks/run.py training
"""

from __future__ import annotations

import time

import numpy as np

import uir
import uir.nn as unn
import uir.numpy as unp

ROUNDS = 6


def _jax():
    try:
        import jax
        import jax.numpy as jnp

        return jax, jnp
    except ImportError:
        return None, None


def mlp_step(xp, nn, t):
    def loss(p, x, y):
        w1, b1, w2, b2 = p
        h = nn.gelu(x @ w1 + b1)
        return xp.mean((h @ w2 + b2 - y) ** 2)

    vg = t.value_and_grad(loss)

    def step(p, x, y):
        value, g = vg(p, x, y)
        return [a - 0.01 * b for a, b in zip(p, g, strict=True)], value

    return step


def attention_backward(xp, nn, t):
    def attention(q, k, v):
        s = q @ xp.swapaxes(k, -1, -2) * 0.125
        return nn.softmax(s, axis=-1) @ v

    def backward(q, k, v, ct):
        _, pull = t.vjp(attention, q, k, v)
        return pull(ct)

    return backward


def _mlp_args(rng):
    f32 = np.float32
    p = [
        (rng.standard_normal((1024, 4096)) * 0.03).astype(f32),
        np.zeros(4096, f32),
        (rng.standard_normal((4096, 1024)) * 0.015).astype(f32),
        np.zeros(1024, f32),
    ]
    return (
        p,
        rng.standard_normal((256, 1024)).astype(f32),
        rng.standard_normal((256, 1024)).astype(f32),
    )


def _attention_args(rng):
    return tuple(rng.standard_normal((8, 512, 64)).astype(np.float32) for _ in range(4))


def _best_of_turns(calls: dict) -> dict:
    best = {k: float("inf") for k in calls}
    for f in calls.values():
        f()
    for _ in range(ROUNDS):
        for name, f in calls.items():
            time.sleep(0.2)
            for _ in range(3):
                t0 = time.perf_counter()
                f()
                best[name] = min(best[name], time.perf_counter() - t0)
    return best


def _agree(a, b, rtol=2e-3) -> bool:
    la = uir.tree_util.tree_leaves(a)
    lb = uir.tree_util.tree_leaves(b)
    return all(
        np.allclose(
            np.asarray(x), np.asarray(y), rtol=rtol, atol=rtol * float(np.abs(np.asarray(y)).max())
        )
        for x, y in zip(la, lb, strict=True)
    )


def speed_rows(peak_gflops: float) -> list[dict]:
    jax, jnp = _jax()
    rng = np.random.default_rng(0)
    rows = []
    cases = [
        ("MLP block train step 256x1024x4096", mlp_step, _mlp_args(rng), 5 * 2 * 256 * 1024 * 4096),
        (
            "attention backward 8x512x64",
            attention_backward,
            _attention_args(rng),
            # forward q.kT and p.v again, then four products back
            6 * 2 * 8 * 512 * 512 * 64,
        ),
    ]
    for name, make, args, flops in cases:
        u = uir.jit(make(unp, unn, uir))
        calls = {"uir": lambda u=u, args=args: u(*args)}
        got = u(*args)
        ok = "-"
        if jax is not None:
            j = jax.jit(make(jnp, jax.nn, jax))
            calls["jax"] = lambda j=j, args=args: jax.block_until_ready(j(*args))
            ok = "yes" if _agree(got, j(*args)) else "NO"
        best = _best_of_turns(calls)
        row = {
            "case": name,
            "uir ms": best["uir"] * 1e3,
            "jax ms": best.get("jax", float("nan")) * 1e3,
            "jax/uir": best.get("jax", float("nan")) / best["uir"],
            "uir GFLOP/s": flops / best["uir"] / 1e9,
            "of peak": flops / best["uir"] / 1e9 / peak_gflops,
            "agree": ok,
        }
        rows.append(row)
    return rows


def compile_rows() -> list[dict]:
    from uir._src.core.backend import clear_cache

    jax, jnp = _jax()
    rng = np.random.default_rng(1)
    rows = []
    for name, make, args in (
        ("compile: MLP train step", mlp_step, _mlp_args(rng)),
        ("compile: attention backward", attention_backward, _attention_args(rng)),
    ):

        def ours(make=make, args=args):
            clear_cache()
            uir.jit(make(unp, unn, uir)).lower(*args).compile()

        t_uir = _best(ours)
        t_jax = float("nan")
        if jax is not None:
            t_jax = _best(
                lambda make=make, args=args: jax.jit(make(jnp, jax.nn, jax)).lower(*args).compile()
            )
        rows.append(
            {"case": name, "uir ms": t_uir * 1e3, "jax ms": t_jax * 1e3, "jax/uir": t_jax / t_uir}
        )
    return rows


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def deep_mlp(xp, nn, t, ckpt: bool, policy=None):
    def layer(h, w):
        return nn.gelu(h @ w)

    f = t.checkpoint(layer, policy=policy) if ckpt else layer

    def loss(ws, x):
        h = x
        for w in ws:
            h = f(h, w)
        return xp.sum(h * h)

    return t.grad(loss)


def scan_rnn(xp, t, lax, ckpt: bool):
    def cell(h, x, w, u):
        return xp.tanh(h @ w + x @ u)

    c = t.checkpoint(cell) if ckpt else cell

    def loss(w, u, xs):
        h, _ = lax.scan(
            lambda h, x: (c(h, x, w, u), None), xp.zeros((xs.shape[1], w.shape[0]), xs.dtype), xs
        )
        return xp.sum(h)

    return t.grad(loss, argnums=(0, 1))


def _uir_temp(fn, args) -> int:
    return uir.jit(fn).lower(*args).compile().memory_analysis().temp_size_in_bytes


def _uir_limited_peak(fn, args) -> tuple[int, int]:
    """(peak of temporaries, the lowest peak the rematerializer reaches
    among limits of 1/2, 5/8, 3/4 and 7/8 of it) from the scheduler and
    the rematerializer on the optimized module."""
    m = uir.passes.default_pipeline().run(uir.jit(fn).lower(*args).module)
    s = uir.schedule.run(m)
    before = uir.buffers.assign(s).peak_bytes
    for fraction in (0.5, 0.625, 0.75, 0.875):
        try:
            limited, _ = uir.schedule.rematerialize(s, memory_limit=int(before * fraction))
        except uir.MemoryLimitError:
            continue
        return before, uir.buffers.assign(limited).peak_bytes
    return before, -1


def memory_rows() -> list[dict]:
    jax, jnp = _jax()
    rng = np.random.default_rng(2)
    f32 = np.float32
    ws = [(rng.standard_normal((1024, 1024)) * 0.03).astype(f32) for _ in range(8)]
    x = rng.standard_normal((256, 1024)).astype(f32)
    w = (rng.standard_normal((512, 512)) * 0.04).astype(f32)
    u = (rng.standard_normal((128, 512)) * 0.08).astype(f32)
    xs = rng.standard_normal((64, 32, 128)).astype(f32)
    rows = []
    for name, make_u, make_j, args in (
        (
            "deep MLP 8x gelu(256x1024 @ 1024x1024)",
            lambda ck: deep_mlp(unp, unn, uir, ck),
            lambda ck: deep_mlp(jnp, jax.nn, jax, ck),
            (ws, x),
        ),
        (
            "scan RNN 64 steps (32x512)",
            lambda ck: scan_rnn(unp, uir, uir.lax, ck),
            lambda ck: scan_rnn(jnp, jax, jax.lax, ck),
            (w, u, xs),
        ),
    ):
        row = {"case": "memory: " + name}
        for ck in (False, True):
            tag = "checkpoint" if ck else "plain"
            row[f"uir {tag} MiB"] = _uir_temp(make_u(ck), args) / 2**20
            if jax is not None:
                c = jax.jit(make_j(ck)).lower(*args).compile()
                row[f"xla {tag} MiB"] = c.memory_analysis().temp_size_in_bytes / 2**20
        before, limited = _uir_limited_peak(make_u(False), args)
        row["uir peak MiB"] = before / 2**20
        row["uir peak, remat MiB"] = limited / 2**20 if limited >= 0 else "none below 7/8"
        rows.append(row)
    return rows


def run() -> list[dict]:
    import suite

    peak = suite.roofline().peak_gflops
    return speed_rows(peak) + compile_rows() + memory_rows()
