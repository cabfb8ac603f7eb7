"""The GPU check's programs: each written once against a namespace (uir's
or JAX's numpy and lax, or PyTorch's), its inputs, and its NumPy reference.
Imported by tools/gpu_artifacts.py (compiling them with uir) and by
tools/gpu_check.py (running them on the GPU beside jax.jit and PyTorch);
needs NumPy only."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

N = 4096


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


@dataclasses.dataclass
class Program:
    inputs: Callable  # rng -> tuple of arrays
    traced: Callable  # (numpy namespace, lax namespace) -> function
    reference: Callable  # NumPy function of the inputs (float64 inside)
    torch: Callable | None = None  # torch module -> function of torch tensors
    bytes_moved: Callable | None = None  # inputs -> bytes a memory-bound kernel moves
    hlo: str | None = None  # HLO text compiled instead of `traced` (uir only)


def _softmax(np_, x):
    e = np_.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layer_norm(np_, x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np_.sqrt(v + 1e-5) * g + b


def _mlp(np_, x, w1, w2):
    return np_.tanh(x @ w1) @ w2


def _attention(np_, q, k, v):
    return _softmax(np_, q @ k.T / 8.0) @ v


def _loop_ref(x):
    for i in range(10):
        x = np.tanh(x * 1.01 + i * 0.001)
    return x


def _bytes(*arrays_out):
    return lambda *args: sum(a.nbytes for a in args) + sum(arrays_out)


PROGRAMS: dict[str, Program] = {
    "chain": Program(
        lambda rng: (_f32(rng, 1 << 24), _f32(rng, 1 << 24), _f32(rng, 1 << 24)),
        lambda np_, lax: lambda a, b, c: np_.tanh(a * b + c),
        lambda a, b, c: np.tanh(a.astype(np.float64) * b + c),
        lambda t: lambda a, b, c: t.tanh(a * b + c),
        lambda a, b, c: 4 * a.nbytes,
    ),
    "softmax": Program(
        lambda rng: (_f32(rng, N, N),),
        lambda np_, lax: lambda x: _softmax(np_, x),
        lambda x: _softmax(np, x.astype(np.float64)),
        lambda t: lambda x: t.softmax(x, dim=-1),
        lambda x: 2 * x.nbytes,
    ),
    "layer_norm": Program(
        lambda rng: (_f32(rng, N, N), _f32(rng, N), _f32(rng, N)),
        lambda np_, lax: lambda x, g, b: _layer_norm(np_, x, g, b),
        lambda x, g, b: _layer_norm(np, x.astype(np.float64), g, b),
        lambda t: lambda x, g, b: t.nn.functional.layer_norm(x, (N,), g, b, 1e-5),
        lambda x, g, b: 2 * x.nbytes,
    ),
    "transpose": Program(
        lambda rng: (_f32(rng, N, N),),
        lambda np_, lax: lambda x: x.T + 1.0,
        lambda x: x.T.astype(np.float64) + 1.0,
        lambda t: lambda x: (x.T + 1.0).contiguous(),
        lambda x: 2 * x.nbytes,
    ),
    "matmul": Program(
        lambda rng: (_f32(rng, N, N), _f32(rng, N, N)),
        lambda np_, lax: lambda a, b: a @ b,
        lambda a, b: a.astype(np.float64) @ b,
        lambda t: lambda a, b: t.matmul(a, b),
    ),
    "mlp": Program(
        lambda rng: (
            _f32(rng, 1024, 1024),
            _f32(rng, 1024, 4096) * 0.03,
            _f32(rng, 4096, 1024) * 0.03,
        ),
        lambda np_, lax: lambda x, w1, w2: _mlp(np_, x, w1, w2),
        lambda x, w1, w2: _mlp(np, x.astype(np.float64), w1, w2),
        lambda t: lambda x, w1, w2: t.tanh(x @ w1) @ w2,
    ),
    "attention": Program(
        lambda rng: (_f32(rng, 2048, 64), _f32(rng, 2048, 64), _f32(rng, 2048, 64)),
        lambda np_, lax: lambda q, k, v: _attention(np_, q, k, v),
        lambda q, k, v: _attention(np, q.astype(np.float64), k, v),
        lambda t: lambda q, k, v: t.softmax(q @ k.T / 8.0, dim=-1) @ v,
    ),
    "custom_call": Program(
        lambda rng: (_f32(rng, 1 << 20),),
        None,
        lambda x: (x.astype(np.float64) * 3 + 1) * 2,
        None,
        lambda x: 0,
        hlo="""
HloModule custom_call
ENTRY e {
  x = f32[1048576] parameter(0)
  c = f32[1048576] custom-call(x), custom_call_target="uir_check_scale",
      api_version=API_VERSION_ORIGINAL
  one = f32[] constant(1)
  ones = f32[1048576] broadcast(one), dimensions={}
  s = f32[1048576] add(c, ones)
  two = f32[] constant(2)
  twos = f32[1048576] broadcast(two), dimensions={}
  ROOT r = f32[1048576] multiply(s, twos)
}""",
    ),
    "while_loop": Program(
        lambda rng: (_f32(rng, 1 << 20),),
        lambda np_, lax: (
            lambda x: lax.fori_loop(0, 10, lambda i, v: np_.tanh(v * 1.01 + i * 0.001), x)
        ),
        lambda x: _loop_ref(x.astype(np.float64)),
        None,
    ),
}
