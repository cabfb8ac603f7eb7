"""The benchmark suite: each case is one function written once against an
array namespace `xp` and run as NumPy, jax.jit (XLA:CPU, where JAX is
installed) and uir.jit on the same inputs in this process. Results are
checked against NumPy first (a case that disagrees is a failure, not
timed), then timed: the median and spread of at least 10 runs after
warm-up, each framework after a pause that lets the others' threads go
idle. The roofline is measured in the same run, on this machine: a
STREAM triad over uir's 2 worker threads (DRAM bandwidth) and a loop of
independent vector FMAs at the host's widest width (FP32 peak); a case's
fraction is its minimal bytes over the triad's bandwidth, or its flops over
the FMA peak. IREE (iree-base-compiler and iree-base-runtime, where
installed) is a third column: the function's StableHLO from jax.jit, compiled
for llvm-cpu with the host CPU and run on the local-task driver with 2
workers."""

from __future__ import annotations

import csv
import dataclasses
import os
import pathlib
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

THREADS = 2


@dataclasses.dataclass
class Roofline:
    dram_gbs: float
    peak_gflops: float


_ROOFLINE: Roofline | None = None


def roofline() -> Roofline:
    """This machine's limits, measured once per run (2 worker threads)."""
    global _ROOFLINE
    if _ROOFLINE is None:
        from uir import _core

        _ROOFLINE = Roofline(
            dram_gbs=_core.codegen.stream_triad_gbs(1 << 25),
            peak_gflops=_core.codegen.fma_peak_gflops(),
        )
    return _ROOFLINE


HERE = pathlib.Path(__file__).resolve().parent
RESULTS = HERE / "results"


@dataclasses.dataclass
class Case:
    name: str
    fn: Callable  # fn(xp, *arrays)
    make: Callable[[np.random.Generator], tuple]  # the inputs
    bytes: float = 0.0  # minimal DRAM traffic (memory-bound cases)
    flops: float = 0.0  # arithmetic (compute-bound cases)
    rtol: float = 1e-4
    quick: bool = False
    static: tuple = ()  # static positional arguments after the arrays


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def chain(xp, x, y):
    return xp.tanh(x * y + x) * 0.5 + y


def softmax(xp, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def layer_norm(xp, x):
    m = xp.mean(x, axis=-1, keepdims=True)
    v = xp.mean((x - m) * (x - m), axis=-1, keepdims=True)
    return (x - m) / xp.sqrt(v + 1e-5)


def row_sums(xp, x):
    return xp.sum(x, axis=1)


def col_sums(xp, x):
    return xp.sum(x, axis=0)


def transpose2d(xp, x):
    return xp.transpose(x) + 0


def permute3d(xp, x):
    return xp.transpose(x, (2, 0, 1)) + 0


def matmul(xp, a, b):
    return a @ b


def mlp(xp, x, w1, w2):
    h = x @ w1
    h = 0.5 * h * (1 + xp.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
    return h @ w2


def attention(xp, q, k, v):
    s = q @ xp.swapaxes(k, -1, -2) * 0.125
    return softmax(xp, s) @ v


def cumsum(xp, x):
    return xp.cumsum(x)


def row_argmax(xp, x):
    return xp.argmax(x, axis=1)


def row_max(xp, x):
    return xp.max(x, axis=1)


def tanh_fma(xp, a, b, c):
    return xp.tanh(a * b + c)


def add_one(xp, x):
    return x + 1.0


def _cases() -> list[Case]:
    cases = [
        Case(
            "1-op call on 1000 elements",
            add_one,
            lambda r: (_f32(r, 1000),),
            bytes=8.0 * 1000,
            quick=True,
        )
    ]
    for n, quick in ((1 << 24, False), (1 << 26, False)):
        cases.append(
            Case(
                f"tanh(a*b+c) {n}",
                tanh_fma,
                lambda r, n=n: (_f32(r, n), _f32(r, n), _f32(r, n)),
                bytes=16.0 * n,
                quick=quick,
            )
        )
    for n, quick in (
        (1 << 10, True),
        (1 << 16, True),
        (1 << 20, True),
        (1 << 24, False),
        (1 << 26, False),
    ):
        cases.append(
            Case(
                f"elementwise chain {n}",
                chain,
                lambda r, n=n: (_f32(r, n), _f32(r, n)),
                bytes=12.0 * n,
                quick=quick,
            )
        )
    for rows, cols, quick in ((32, 1024, True), (4096, 4096, False)):
        cases.append(
            Case(
                f"softmax {rows}x{cols}",
                softmax,
                lambda r, a=rows, b=cols: (_f32(r, a, b),),
                bytes=8.0 * rows * cols,
                quick=quick,
            )
        )
        cases.append(
            Case(
                f"layer norm {rows}x{cols}",
                layer_norm,
                lambda r, a=rows, b=cols: (_f32(r, a, b),),
                bytes=8.0 * rows * cols,
                quick=quick,
            )
        )
    cases.append(
        Case(
            "row sums 4096x4096",
            row_sums,
            lambda r: (_f32(r, 4096, 4096),),
            bytes=4.0 * 4096 * 4096,
        )
    )
    cases.append(
        Case(
            "column sums 4096x4096",
            col_sums,
            lambda r: (_f32(r, 4096, 4096),),
            bytes=4.0 * 4096 * 4096,
        )
    )
    cases.append(
        Case(
            "row sums 1024x1024",
            row_sums,
            lambda r: (_f32(r, 1024, 1024),),
            bytes=4.0 * 1024 * 1024,
            quick=True,
        )
    )
    for n, quick in ((1 << 14, True), (1 << 20, True), (1 << 24, False)):
        cases.append(
            Case(
                f"cumsum {n}",
                cumsum,
                lambda r, n=n: (_f32(r, n),),
                bytes=8.0 * n,
                rtol=1e-3,
                quick=quick,
            )
        )
    # argmax beside the plain max it should cost about as much as.
    for name, fn in (("argmax", row_argmax), ("max", row_max)):
        cases.append(
            Case(
                f"{name} over rows 4096x4096",
                fn,
                lambda r: (_f32(r, 4096, 4096),),
                bytes=4.0 * 4096 * 4096,
            )
        )
    cases.append(
        Case(
            "transpose 2048x2048",
            transpose2d,
            lambda r: (_f32(r, 2048, 2048),),
            bytes=8.0 * 2048 * 2048,
            quick=True,
        )
    )
    cases.append(
        Case(
            "permute 64x128x256",
            permute3d,
            lambda r: (_f32(r, 64, 128, 256),),
            bytes=8.0 * 64 * 128 * 256,
        )
    )
    for n in (256, 512, 1024, 2048):
        cases.append(
            Case(
                f"matmul {n}",
                matmul,
                lambda r, n=n: (_f32(r, n, n), _f32(r, n, n)),
                flops=2.0 * n**3,
                rtol=1e-3,
                quick=n == 256,
            )
        )
    cases.append(
        Case(
            "batched matmul 32x128x128",
            matmul,
            lambda r: (_f32(r, 32, 128, 128), _f32(r, 32, 128, 128)),
            flops=2.0 * 32 * 128**3,
            rtol=1e-3,
        )
    )
    cases.append(
        Case(
            "MLP 256: 1024->4096->1024 gelu",
            mlp,
            lambda r: (_f32(r, 256, 1024), _f32(r, 1024, 4096) * 0.03, _f32(r, 4096, 1024) * 0.03),
            flops=2.0 * 256 * 1024 * 4096 * 2,
            rtol=1e-3,
        )
    )
    cases.append(
        Case(
            "attention seq 512, 8 heads, d 64",
            attention,
            lambda r: tuple(_f32(r, 8, 512, 64) for _ in range(3)),
            flops=2.0 * 8 * 512 * 512 * 64 * 2,
            rtol=1e-3,
        )
    )
    return cases


def _loop_case():
    """fori_loop of 1,000 tiny steps: runtime overhead, not arithmetic."""

    def uir_fn(x):
        from uir import lax

        return lax.fori_loop(0, 1000, lambda i, v: v * 0.999 + 1.0, x)

    def np_fn(x):
        for _ in range(1000):
            x = x * np.float32(0.999) + np.float32(1.0)
        return x

    def jax_fn(x):
        from jax import lax

        return lax.fori_loop(0, 1000, lambda i, v: v * 0.999 + 1.0, x)

    return uir_fn, np_fn, jax_fn


# Pause before each framework's timings. Thread pools keep spinning or
# yielding after work (OpenBLAS's threads for about 2^28 cycles, Eigen's and
# IREE's workers briefly): on a 2-core machine, the next framework timed
# right after them shares the cores with those threads.
SETTLE_SECONDS = 0.3


def _time(fn, repeats: int) -> tuple[float, float]:
    fn()
    time.sleep(SETTLE_SECONDS)
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), max(samples) - min(samples)


def _agree(got, want, rtol) -> bool:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=rtol * scale))


class Iree:
    """IREE from PyPI: StableHLO in, llvm-cpu for the host, local-task driver."""

    def __init__(self):
        import iree.compiler
        import iree.runtime

        self.compiler = iree.compiler
        self.runtime = iree.runtime
        iree.runtime.flags.parse_flags(f"--task_topology_max_group_count={THREADS}")
        self.config = iree.runtime.Config("local-task")

    def compile(self, jax_fn, args):
        import jax

        text = str(jax.jit(jax_fn).lower(*args).compiler_ir("stablehlo"))
        vmfb = self.compiler.compile_str(
            text,
            target_backends=["llvm-cpu"],
            input_type="stablehlo",
            extra_args=["--iree-llvmcpu-target-cpu=host"],
        )
        ctx = self.runtime.SystemContext(config=self.config)
        vm_module = self.runtime.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm_module)
        main = ctx.modules[vm_module.name]["main"]
        device = self.config.device
        dev_args = [self.runtime.asdevicearray(device, a) for a in args]
        return lambda: main(*dev_args)


def _iree():
    try:
        return Iree()
    except Exception:
        return None


def _host(value):
    """An IREE result (or tuple of them) as NumPy."""
    if isinstance(value, (list, tuple)):
        return value[0].to_host() if len(value) == 1 else [v.to_host() for v in value]
    return value.to_host()


def run_suite(quick: bool = False, name_filter: str | None = None, repeats: int = 10) -> list[dict]:
    import uir
    import uir.numpy as unp

    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    iree = _iree() if jax is not None else None
    roof = roofline()
    rng = np.random.default_rng(0)
    rows = []
    entries = [(c.name, c) for c in _cases()]
    entries.append(("fori_loop 1000 tiny steps", None))
    try:  # progress on stderr when tqdm is installed (make bench-deps)
        from tqdm import tqdm

        entries = tqdm(entries, desc="cases", unit="case", leave=False)
    except ImportError:
        pass
    for name, case in entries:
        if quick and case is not None and not case.quick:
            continue
        if name_filter and name_filter.lower() not in name.lower():
            continue
        row = {"case": name}
        if case is None:
            uir_fn, np_fn, jax_fn = _loop_case()
            args = (np.ones(16, np.float32),)
            f_np = lambda a=args, f=np_fn: f(*a)  # noqa: E731
            uir_j = uir.jit(uir_fn)
            jax_j = jax.jit(jax_fn) if jax else None
            jax_plain = jax_fn
            rtol, nbytes, flops = 1e-4, 0.0, 0.0
        else:
            args = case.make(rng)
            f_np = lambda c=case, a=args: c.fn(np, *a)  # noqa: E731
            uir_j = uir.jit(lambda *a, c=case: c.fn(unp, *a))
            jax_plain = lambda *a, c=case: c.fn(jnp, *a)  # noqa: E731
            jax_j = jax.jit(jax_plain) if jax else None
            rtol, nbytes, flops = case.rtol, case.bytes, case.flops
        want = f_np()
        t0 = time.perf_counter()
        compiled = uir_j.lower(*args).compile()
        row["uir_compile_ms"] = (time.perf_counter() - t0) * 1e3
        got = compiled(*args)
        if not _agree(got, want, rtol):
            row["status"] = "FAIL: uir disagrees with NumPy"
            rows.append(row)
            continue
        if jax_j is not None:
            jargs = [jax.device_put(a) for a in args]
            t0 = time.perf_counter()
            jcompiled = jax_j.lower(*jargs).compile()
            row["jax_compile_ms"] = (time.perf_counter() - t0) * 1e3
            if not _agree(np.asarray(jcompiled(*jargs)), want, rtol):
                row["status"] = "FAIL: JAX disagrees with NumPy"
                rows.append(row)
                continue
        t_np, _ = _time(f_np, repeats)
        t_uir, s_uir = _time(lambda c=compiled, a=args: c(*a), repeats)
        row.update(
            numpy_ms=t_np * 1e3,
            uir_ms=t_uir * 1e3,
            uir_spread_ms=s_uir * 1e3,
            uir_over_numpy=t_uir / t_np,
        )
        if jax_j is not None:
            t_jax, _ = _time(lambda j=jcompiled, a=jargs: j(*a).block_until_ready(), repeats)
            row.update(jax_ms=t_jax * 1e3, uir_over_jax=t_uir / t_jax)
        if iree is not None:
            try:
                run_iree = iree.compile(jax_plain, args)
                if _agree(_host(run_iree()), want, rtol):
                    t_iree, _ = _time(run_iree, repeats)
                    row.update(iree_ms=t_iree * 1e3, uir_over_iree=t_uir / t_iree)
                else:
                    row["iree_ms"] = "disagrees"
            except Exception as e:
                row["iree_ms"] = f"fails: {type(e).__name__}"
        if nbytes:
            row["uir_roofline"] = nbytes / (roof.dram_gbs * 1e9) / t_uir
        elif flops:
            row["uir_roofline"] = flops / (roof.peak_gflops * 1e9) / t_uir
        row["status"] = "ok"
        rows.append(row)
    return rows


def _compile_from_disk_cache_ms(compile_fn) -> float:
    """Milliseconds of `compile_fn` with its executable already in the
    on-disk cache (UIR_FLAGS=--cpu_cache_dir: serialized executables) and
    the in-process executable cache empty: what a second process pays
    (tracing included)."""
    import tempfile

    from uir._src.core import backend

    saved = os.environ.get("UIR_FLAGS")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["UIR_FLAGS"] = f"{saved or ''} --cpu_cache_dir={cache}".strip()
        try:
            backend.clear_cache()
            compile_fn()  # fills the disk cache
            backend.clear_cache()
            t0 = time.perf_counter()
            compiled = compile_fn()
            elapsed = (time.perf_counter() - t0) * 1e3
            assert compiled.executable.cache_hit
        finally:
            backend.clear_cache()
            if saved is None:
                os.environ.pop("UIR_FLAGS", None)
            else:
                os.environ["UIR_FLAGS"] = saved
    return elapsed


def compile_rows() -> list[dict]:
    """Compile time of a chain of N elementwise ops (about N instructions),
    fresh and from the on-disk executable cache."""
    import uir
    import uir.numpy as unp

    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        jax = None
    rows = []
    x = np.ones(64, np.float32)
    for n in (100, 1000):

        def chain_n(xp, v, n=n):
            for i in range(n // 2):
                v = xp.sin(v) + float(i)
            return v

        t0 = time.perf_counter()
        lowered = uir.jit(lambda v: chain_n(unp, v)).lower(x)
        lowered.compile()
        row = {
            "case": f"compile {n} instructions",
            "uir_compile_ms": (time.perf_counter() - t0) * 1e3,
        }
        row["hlo_instructions"] = lowered.as_text().count(" = ")
        row["uir_disk_cache_ms"] = _compile_from_disk_cache_ms(
            lambda: uir.jit(lambda v: chain_n(unp, v)).lower(x).compile()
        )
        if jax is not None:
            t0 = time.perf_counter()
            jax.jit(lambda v: chain_n(jnp, v)).lower(x).compile()
            row["jax_compile_ms"] = (time.perf_counter() - t0) * 1e3
        row["status"] = "ok"
        rows.append(row)
    return rows


def machine() -> str:
    import uir

    info = uir.info()
    return (
        f"{info['cpu']}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}; "
        f"uir {info['version']} (cpu backend), {THREADS} threads for NumPy's BLAS, XLA, IREE and uir; "
        f"roofline measured in this run: {roofline().dram_gbs:.1f} GB/s (STREAM triad), "
        f"{roofline().peak_gflops:.0f} GFLOP/s FP32 (FMA loop), {THREADS} threads"
    )


def write_reports(rows: list[dict], stem: str = "latest") -> list[pathlib.Path]:
    RESULTS.mkdir(exist_ok=True)
    columns = list(dict.fromkeys(k for r in rows for k in r))
    csv_path = RESULTS / f"{stem}.csv"
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows(rows)
    md_path = RESULTS / f"{stem}.md"

    def fmt(v):
        return f"{v:.3g}" if isinstance(v, float) else str(v)

    lines = [
        f"Machine: {machine()}",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    md_path.write_text("\n".join(lines) + "\n")
    paths = [csv_path, md_path]
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return paths
    timed = [r for r in rows if r.get("status") == "ok" and "uir_over_numpy" in r]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, max(4, 0.35 * len(timed))))
    names = [r["case"] for r in timed]
    ax1.barh(names, [r["uir_over_numpy"] for r in timed], label="uir / NumPy")
    if timed and "uir_over_jax" in timed[0]:
        ax1.barh(names, [r.get("uir_over_jax", 0) for r in timed], alpha=0.6, label="uir / JAX")
    ax1.set_xscale("log")
    ax1.axvline(1, color="k", lw=0.5)
    ax1.set_xlabel("time ratio (lower is better)")
    ax1.legend()
    ax2.barh(names, [r.get("uir_roofline", 0) for r in timed])
    ax2.set_xlabel("fraction of the roofline (uir)")
    ax2.set_yticks([])
    fig.tight_layout()
    png = RESULTS / f"{stem}.png"
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return [*paths, png]
