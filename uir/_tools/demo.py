"""`uir demo`: the main job on a bundled example, one printed stage at a time.

Each stage is a function that prints its section and returns True if it
succeeded; later stages (trace, HLO, optimize, compile, run, compare) join the
list as the compiler grows.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from uir import _core
from uir._src.tools.info import info

_RULE = "-" * 72


def _section(title: str) -> None:
    print(f"\n{title}\n{_RULE}")


def print_info() -> None:
    """Prints uir.info() as an aligned table; the feature list is wrapped."""
    data = info()
    features = data.pop("cpu_features")
    for key, value in data.items():
        print(f"  {key:<14} {value}")
    line = "  cpu_features  "
    for feature in features:
        if len(line) + len(feature) > 78:
            print(line.rstrip())
            line = " " * 16
        line += feature + " "
    print(line.rstrip())


def _best_time(fn: Callable[[], object], repeats: int = 7) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _stage_host() -> bool:
    _section("Host and build")
    print_info()
    return True


def _mlp_block(xp, nn_gelu):
    def block(x, g, w1, b1, w2, b2):
        # a transformer MLP block: layer norm, dense + gelu, dense, residual
        mu = xp.mean(x, axis=-1, keepdims=True)
        var = xp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        h = (x - mu) / xp.sqrt(var + 1e-5) * g
        return x + nn_gelu(h @ w1 + b1) @ w2 + b2

    return block


def _numpy_gelu(x):
    # the tanh form, as jax.nn.gelu and uir.nn.gelu compute by default
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _stage_main(size: int) -> bool:
    """The main job: trace, optimize, lower, compile and run an MLP block."""
    import uir
    import uir.nn as nn
    import uir.numpy as unp

    batch = max(8, min(256, size // 16384))
    d, hidden = 512, 2048
    _section(f"The main job: an MLP block ({batch}x{d} -> {hidden} -> {d}) traced and compiled")
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal(s).astype(np.float32) * scale
        for s, scale in [
            ((batch, d), 1.0),
            ((d,), 1.0),
            ((d, hidden), d**-0.5),
            ((hidden,), 0.1),
            ((hidden, d), hidden**-0.5),
            ((d,), 0.1),
        ]
    ]
    fn = uir.jit(_mlp_block(unp, nn.gelu))
    start = time.perf_counter()
    lowered = fn.lower(*args)
    compiled = lowered.compile()
    compile_s = time.perf_counter() - start
    print(
        "traced HLO, each op with the source line that made it (lowered.as_text(debug_info=True)):"
    )
    print(lowered.as_text(debug_info=True))
    kg = compiled.kernel_graph
    text = kg.to_text()
    print("optimized Kernel Graph (compiled.kernel_graph; iGraphs of the first kernel below):")
    print("\n".join(line for line in text.splitlines() if not line.startswith("    ")).rstrip())
    kernel = next(n for n in kg.nodes if n.kind == "kernel")
    print(f"\none iGraph, of %{kernel.name}:")
    print(kernel.igraphs[0].to_text().rstrip())
    print("\nthunks a call runs (compiled.executable.thunk_text):")
    print(compiled.executable.thunk_text.rstrip())
    print(
        f"\n  compiled in {compile_s * 1e3:.0f} ms (trace, passes, lowering, LLVM); "
        f"fallbacks: {len(compiled.fallbacks)}"
    )
    cost, memory = compiled.cost_analysis(), compiled.memory_analysis()
    print(
        f"  cost_analysis(): {cost['flops']:.3g} flops, {cost['bytes accessed']:.3g} bytes accessed; "
        f"memory_analysis(): arguments {memory.argument_size_in_bytes} B, "
        f"outputs {memory.output_size_in_bytes} B, temporaries {memory.temp_size_in_bytes} B, "
        f"code {memory.generated_code_size_in_bytes} B"
    )
    got = fn(*args)
    want = _mlp_block(np, _numpy_gelu)(*args)
    err = float(np.max(np.abs(got - want)))
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-4))
    print(f"  result {'matches' if ok else 'DIFFERS FROM'} NumPy (largest difference {err:.2g})")
    # The gradient of the block's mean square with respect to its
    # layer-norm gain (uir.grad replays the traced HLO, a rule per opcode), checked
    # along one direction by a central difference.
    block = _mlp_block(unp, nn.gelu)

    def loss(b1):
        return unp.mean(block(args[0], b1, *args[2:]) ** 2)

    grad = uir.jit(uir.grad(loss))(args[1])
    direction = rng.standard_normal(args[1].shape).astype(np.float32)
    eps = 1e-2
    jl = uir.jit(loss)
    fd = (float(jl(args[1] + eps * direction)) - float(jl(args[1] - eps * direction))) / (2 * eps)
    along = float(np.dot(np.asarray(grad), direction))
    rel = abs(along - fd) / max(abs(fd), 1e-12)
    print(
        f"  uir.grad of mean(block(x)**2) by its layer-norm gain: along a random direction "
        f"{along:.5g}, central difference {fd:.5g} (relative difference {rel:.1g})"
    )
    ok = ok and rel < 1e-2
    # The same gradient with the block under uir.checkpoint: the backward pass
    # recomputes the block instead of keeping its intermediates.
    ck = uir.checkpoint(block)

    def loss_ck(b1):
        return unp.mean(ck(args[0], b1, *args[2:]) ** 2)

    same = bool(np.allclose(uir.jit(uir.grad(loss_ck))(args[1]), grad, rtol=1e-4, atol=1e-6))

    def kept(f):
        rows = uir.saved_residuals(f, args[1])
        return sum(int(np.prod(s)) * np.dtype(d).itemsize for s, d, _ in rows)

    print(
        f"  under uir.checkpoint: {'the same' if same else 'A DIFFERENT'} gradient; the backward "
        f"pass keeps {kept(loss_ck) / 2**20:.1f} MiB of the forward pass instead of "
        f"{kept(loss) / 2**20:.1f} MiB"
    )
    ok = ok and same
    t_uir = _best_time(lambda: fn(*args))
    t_np = _best_time(lambda: _mlp_block(np, _numpy_gelu)(*args))
    print(f"  uir    {t_uir * 1e3:8.3f} ms  ({_core.runtime.num_threads()} threads)")
    print(f"  numpy  {t_np * 1e3:8.3f} ms  ({t_np / t_uir:.2f}x uir's time)")
    try:
        import jax
        import jax.numpy as jnp

        jf = jax.jit(_mlp_block(jnp, jax.nn.gelu))
        jf(*args).block_until_ready()
        t_jax = _best_time(lambda: jf(*args).block_until_ready())
        print(f"  jax    {t_jax * 1e3:8.3f} ms  ({t_jax / t_uir:.2f}x uir's time)")
    except ImportError:
        print("  jax    not installed (make bench installs it)")
    print("\nper-op profile of one call (compiled.profile(*args)):")
    print(compiled.profile(*args))
    blob = compiled.serialize()
    start = time.perf_counter()
    loaded = uir.deserialize(blob)
    load_ms = (time.perf_counter() - start) * 1e3
    same = np.array_equal(loaded(*args), compiled(*args))
    print(
        f"\nserialized: {len(blob) / 1024:.0f} KiB; uir.deserialize loads it in "
        f"{load_ms:.1f} ms (no LLVM), same result: {same}"
    )
    return ok and same


def _stage_passes() -> bool:
    import numpy as np

    import uir
    import uir.nn as nn
    import uir.numpy as jnp

    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
        return e / jnp.sum(e, axis=1, keepdims=True)

    def mlp_block(x, g, w1, b1, w2, b2):
        # a transformer MLP block: layer norm, dense + gelu, dense, residual
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(var + 1e-5) * g
        return x + nn.gelu(h @ w1 + b1) @ w2 + b2

    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    block_args = [
        rng.standard_normal(s).astype(np.float32)
        for s in [(4, 8), (8,), (8, 16), (16,), (16, 8), (8,)]
    ]
    ok = True
    for name, fn, args in [("softmax", softmax, [x]), ("MLP block", mlp_block, block_args)]:
        _section(f"Passes: a traced {name} through the default pipeline (check=True)")
        module = uir.jit(fn).lower(*args).module
        print(module.to_text(print_metadata=False))
        out, records = uir.passes.default_pipeline().run(module, trace=True, check=True)
        print(uir.passes.format_trace(records))
        print()
        print(out.to_text(print_metadata=False))
        if fn is softmax:
            print("fusion decisions (uir.passes.explain_fusion):")
            print(uir.passes.explain_fusion(module))
        kernels = [
            i.opcode for i in out.entry.instructions if i.opcode not in ("parameter", "constant")
        ]
        print(f"  kernels left: {len(kernels)} ({', '.join(kernels)})")
        same = all(
            np.allclose(a, b, rtol=1e-5, atol=1e-6)
            for a, b in zip(
                _leaves(uir.evaluate(out, *args)), _leaves(uir.evaluate(module, *args)), strict=True
            )
        )
        print(
            f"  optimized module {'matches' if same else 'DIFFERS FROM'} the original on random inputs"
        )
        ok = ok and same
    return ok


def _stage_buffers() -> bool:
    import numpy as np

    import uir
    import uir.numpy as jnp

    def block(x, wq, wk, wv, w1, w2):
        q, k, v = x @ wq, x @ wk, x @ wv
        s = (q @ k.T) * 0.125
        p = jnp.exp(s - jnp.max(s, axis=-1, keepdims=True))
        h = x + (p / jnp.sum(p, axis=-1, keepdims=True)) @ v
        return h + jnp.tanh(h @ w1) @ w2

    _section("Scheduling and buffer assignment: a traced transformer block")
    rng = np.random.default_rng(0)
    shapes = [(128, 64), (64, 64), (64, 64), (64, 64), (64, 256), (256, 64)]
    args = [rng.standard_normal(s).astype(np.float32) / 8 for s in shapes]
    compiled = uir.jit(block).lower(*args).compile()
    nodes = [f"{n.op} %{n.name}" for n in compiled.kernel_graph.nodes]
    print("nodes: " + ", ".join(nodes))
    print(
        "  (dot-chain: attention's scores and the MLP's hidden layer stay in blocks of "
        "rows, never in the arena)"
    )
    _, report = uir.schedule.run(compiled.module, report=True)
    print(report)
    ba = compiled.buffer_assignment
    text = ba.to_text()
    print(text[: text.index("Used values:")].rstrip())
    print(text[text.index("BufferAssignment stats:") :].rstrip())
    problems = ba.problems()
    print(
        f"  arena {ba.arena_bytes} B for a peak of {ba.peak_bytes} B live at once; "
        f"check(): {'no overlap of live values' if not problems else problems[0]}"
    )
    return not problems


def _stage_igraph() -> bool:
    import numpy as np

    import uir
    import uir.igraph as ig
    import uir.numpy as jnp

    def softmax(x):
        e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
        return e / jnp.sum(e, axis=-1, keepdims=True)

    _section("The Unified IR: a traced softmax as a Kernel Graph of iGraphs")
    x = np.random.default_rng(0).standard_normal((64, 512)).astype(np.float32)
    compiled = uir.jit(softmax).lower(x).compile()
    kg = compiled.kernel_graph
    print(kg.to_text().rstrip())
    [node] = [n for n in kg.nodes if n.kind == "kernel"]
    read = sum(g.dram_bytes_read() for g in node.igraphs)
    written = sum(g.dram_bytes_written() for g in node.igraphs)
    got = ig.interpret(kg, x)
    same = bool(np.allclose(got, compiled(x), rtol=1e-6))
    print(
        f"  dram bytes read {read} (input {x.nbytes}), written {written}; "
        f"iGraph interpreter {'agrees' if same else 'DISAGREES'} with the evaluator"
    )
    # How the backend runs the kernel is the iGraph's plan (its `plan` line
    # and the iOps' {...}); the lowering's steps, each with its text:
    steps = ig.lowering_steps(compiled.module, node.name)
    print("  lowering steps (uir.igraph.lowering_steps): " + ", ".join(s for s, _ in steps))
    replanned = all(ig.plan(g.unplanned()) == g for g in node.igraphs)
    print(f"  plan: {node.igraphs[0].plan}; the plan steps give it again: {replanned}")
    return same and read == x.nbytes and written == x.nbytes and replanned


def _stage_lapack() -> bool:
    import re

    import numpy as np

    import uir
    import uir.examples
    import uir.numpy as jnp

    _section("JAX's own CPU dump of jnp.linalg.solve: LAPACK custom calls, built in")
    m = uir.hlo.load(uir.examples.path("jax_solve.hlo"))
    calls = sorted(set(re.findall(r'custom_call_target="([^"]+)"', str(m))))
    print(f"{uir.examples.path('jax_solve.hlo').name}: custom calls {', '.join(calls)}")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5, 5)).astype(np.float32) + 5 * np.eye(5, dtype=np.float32)
    b = rng.standard_normal((3, 5, 2)).astype(np.float32)
    want = np.linalg.solve(a, b)
    evaluated, compiled = uir.evaluate(m, a, b), uir.compile(m)(a, b)
    traced = uir.jit(jnp.linalg.solve).lower(a, b).as_text()
    traced_calls = sorted(set(re.findall(r'custom_call_target="([^"]+)"', traced)))
    ok = bool(np.allclose(evaluated, want, atol=1e-5) and np.allclose(compiled, want, atol=1e-5))
    print(
        f"  evaluated and compiled: {'agree' if ok else 'DISAGREE'} with numpy.linalg.solve "
        f"(max |diff| {np.abs(compiled - want).max():.1e}); uir.numpy.linalg.solve traces to "
        f"{', '.join(traced_calls)}"
    )
    return ok and traced_calls == calls


def _stage_gpu() -> bool:
    """The GPU target on this machine: PTX for a traced softmax, the same
    kernels run on the simulated GPU against the evaluator, and the devices."""
    import numpy as np

    import uir
    import uir.numpy as jnp

    _section("The GPU target: PTX through LLVM's NVPTX back end, checked on the simulated GPU")

    def softmax(x):
        e = jnp.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    x = np.random.default_rng(0).standard_normal((8, 4096)).astype(np.float32)
    exe = uir.compile(uir.jit(softmax).lower(x).module, backend="gpu")
    ptx = exe.as_text("ptx")
    for k in exe.gpu_kernels:
        print(
            f"kernel {k['name']}: grid {k['grid']}, block {k['block']}, "
            f"{k['shared_bytes']} bytes of shared memory; {len(ptx.splitlines())} lines of PTX"
        )
    err = float(np.abs(exe.simulate(x) - uir.evaluate(exe.module, x)).max())
    print(f"  simulated on this CPU: {'matches' if err < 1e-6 else 'DIFFERS FROM'} the evaluator")
    print(f"  uir.devices(): {uir.devices()}")
    return err < 1e-6 and exe.fallbacks == []


def _stage_collectives() -> bool:
    """Several participants: a sharded matmul under shard_map (4 threads of
    this process here; one per process under mpirun), its all-reduce a
    collective thunk, the result against NumPy."""
    import numpy as np

    import uir
    from uir._src.core import distributed
    from uir.sharding import P

    _section("Several participants: shard_map, XLA's collectives, threads or MPI processes")
    mesh = uir.sharding.make_mesh((4,), ("x",))
    f = uir.jit(
        uir.shard_map(
            lambda a, b: uir.lax.psum(a @ b, "x"),
            mesh=mesh,
            in_specs=(P(None, "x"), P("x", None)),
            out_specs=P(),
        )
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 256)).astype(np.float32)
    b = rng.standard_normal((256, 32)).astype(np.float32)
    compiled = f.lower(a, b).compile()
    for line in compiled.executable.thunk_text.splitlines():
        if " collective " in line:
            print(" ".join(line.split()[:9]))
    err = float(np.abs(f(a, b) - a @ b).max())
    ok = err < 1e-3 and compiled.fallbacks == []
    print(f"  {mesh}: psum of 4 blocks {'matches' if ok else 'DIFFERS FROM'} NumPy's a @ b")
    mpi = "found" if distributed.mpirun() else "not found (apt install openmpi-bin)"
    print(f"  across processes: mpirun {mpi}; `uir run --np N FILE.hlo`, uir.distributed")
    return ok


def _leaves(value) -> list:
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def _stage_report() -> bool:
    """The whole compile as one offline HTML page, and the rich displays a
    notebook shows (the same HTML, stage by stage)."""
    import tempfile

    import uir
    import uir.examples

    _section("Exploring: uir.report and the rich displays of every stage")
    module = uir.hlo.load(uir.examples.path("mlp.hlo"))
    report = uir.report(module, profile=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = report.save(os.path.join(tmp, "mlp.html"))
        size = os.path.getsize(path)
    print(
        f"uir report {uir.examples.path('mlp.hlo').name} -o report.html: {size / 1024:.0f} KiB "
        f"in {report.seconds:.2f} s, {report.html.count('<svg')} drawings, no script or address"
    )
    shown = {
        "HloModule": module,
        "pipeline trace": uir.passes.default_pipeline().run(module, trace=True)[1],
        "Kernel Graph": uir.igraph.lower(module),
    }
    for name, obj in shown.items():
        print(f"  {name}._repr_html_(): {len(obj._repr_html_()) / 1024:.0f} KiB of HTML")
    offline = "http" not in report.html and "<script" not in report.html
    return offline and "uir report: mlp" in report.html


def run(size: int = 1 << 22) -> int:
    """Runs every stage; returns the process exit status."""
    from uir import __version__

    print(f"uir {__version__}: a tensor compiler from array programs and XLA's HLO to machine code")
    stages: list[Callable[[], bool]] = [
        _stage_host,
        lambda: _stage_main(size),
        _stage_passes,
        _stage_buffers,
        _stage_igraph,
        _stage_lapack,
        _stage_gpu,
        _stage_collectives,
        _stage_report,
    ]
    ok = all([stage() for stage in stages])
    print(f"\n{'demo finished' if ok else 'demo FAILED'}")
    return 0 if ok else 1
