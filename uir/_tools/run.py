"""`uir run FILE.hlo`: evaluate a module on given or random inputs and
summarize each output."""

from __future__ import annotations

import os
import time

import numpy as np

from uir._src.core import hlo
from uir._src.core.evaluate import evaluate, random_arguments, required_replicas


def _leaf_names(shape, prefix: str) -> list[str]:
    if shape.is_tuple:
        names = []
        for i, s in enumerate(shape.tuple_shapes):
            names += _leaf_names(s, f"{prefix}.{i}")
        return names
    return [prefix]


def _assemble(shape, prefix: str, data) -> object:
    if shape.is_tuple:
        return tuple(_assemble(s, f"{prefix}.{i}", data) for i, s in enumerate(shape.tuple_shapes))
    return data[prefix]


def _load_inputs(path: str, module) -> list:
    """One array per parameter, named arr_0, arr_1, ... or after the
    parameters; a tuple parameter's elements are NAME.0, NAME.1, ..."""
    params = module.entry.parameters
    with np.load(path) as data:
        keys = list(data.keys())
        by_name = all(all(n in data for n in _leaf_names(p.shape, p.name)) for p in params)
        prefixes = [p.name if by_name else f"arr_{i}" for i, p in enumerate(params)]
        missing = [
            n
            for p, prefix in zip(params, prefixes, strict=True)
            for n in _leaf_names(p.shape, prefix)
            if n not in data
        ]
        if missing:
            raise ValueError(f"{path} has no arrays {missing} for the parameters (it has {keys})")
        return [
            _assemble(p.shape, prefix, data) for p, prefix in zip(params, prefixes, strict=True)
        ]


def _flatten(value, prefix: str = "out") -> list[tuple[str, np.ndarray]]:
    if isinstance(value, tuple):
        out = []
        for i, v in enumerate(value):
            out += _flatten(v, f"{prefix}.{i}")
        return out
    return [(prefix, np.asarray(value))]


def summarize(name: str, array: np.ndarray) -> str:
    """One line: dtype and shape, min/max/mean over the non-NaN values (of
    the magnitudes, for complex), and the first values."""
    line = f"{name}: {array.dtype}{list(array.shape)}"
    numeric = array.dtype.kind in "biufc" or array.dtype.name.startswith(
        ("bfloat", "float", "int", "uint")
    )
    if numeric and array.size:
        values = np.abs(array) if array.dtype.kind == "c" else array.astype(np.float64)
        values = values[~np.isnan(values)]
        if values.size:
            line += f"  min={values.min():.6g} max={values.max():.6g} mean={values.mean():.6g}"
        else:
            line += "  all NaN"
    first = ", ".join(str(v) for v in array.reshape(-1)[:6])
    return line + f"  first=[{first}{', ...' if array.size > 6 else ''}]"


def _compare(got: list[tuple[str, np.ndarray]], want: list[tuple[str, np.ndarray]]) -> None:
    """Prints the largest difference of each output from the evaluator's."""
    print("compared with the evaluator:")
    for (name, g), (_, w) in zip(got, want, strict=True):
        if g.shape != w.shape or g.dtype != w.dtype:
            print(f"  {name}: {g.dtype}{list(g.shape)} vs {w.dtype}{list(w.shape)}: MISMATCH")
            continue
        if g.size == 0:
            print(f"  {name}: empty")
            continue
        if w.dtype.kind in "biu" or w.dtype == np.bool_:
            bad = int(np.count_nonzero(g != w))
            print(f"  {name}: {bad} element(s) differ" if bad else f"  {name}: identical")
            continue
        gw, ww = (
            g.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
            w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
        )
        both_nan = np.isnan(gw) & np.isnan(ww)
        with np.errstate(invalid="ignore"):
            diff = np.where(both_nan | (gw == ww), 0.0, np.abs(gw - ww))
        scale = np.abs(ww)
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), diff)
        i = int(np.nanargmax(diff))
        print(
            f"  {name}: max abs diff {float(np.nanmax(diff)):.3g} at flat index {i}, "
            f"max rel diff {float(np.nanmax(rel)):.3g}"
        )


def main(
    path: str,
    *,
    inputs: str | None,
    seed: int,
    output: str | None,
    replicas: int | None = None,
    backend: str = "cpu",
    compare: bool = False,
    np_: int | None = None,
    argv: list[str] | None = None,
) -> int:
    from uir._src.core import distributed

    if np_ is not None and distributed.mpi_environment() is None:
        # Start the ranks: this command again in each, under mpirun.
        import pathlib
        import subprocess
        import sys
        import tempfile

        rest = list(argv or [])
        cmd = distributed.mpirun_command(np_, [sys.executable, "-m", "uir", "run", *rest])
        with tempfile.TemporaryDirectory(prefix="uir-run-") as reports:
            # Each rank writes its report here; they are printed in rank
            # order once all have finished (mpirun forwards each process's
            # output on its own, in no set order).
            env = distributed.mpirun_environment()
            env["UIR_RUN_REPORTS"] = reports
            code = subprocess.run(cmd, env=env, check=False).returncode
            for r in range(np_):
                path = pathlib.Path(reports) / f"r{r}.txt"
                if path.exists():
                    print(path.read_text(), flush=True)
        return code
    module = hlo.load(path)
    args = _load_inputs(inputs, module) if inputs else random_arguments(module, seed)
    count = replicas or required_replicas(module)
    if np_ is not None:
        return _main_rank(module, args, count, seed, output, compare, np_)
    if backend == "cpu":
        from uir._src.core.backend import Executable

        start = time.perf_counter()
        exe = Executable(module, "cpu")
        compile_ms = (time.perf_counter() - start) * 1e3
        run = (lambda: exe(*args, replicas=count)) if count > 1 else (lambda: exe(*args))
        run()  # warm: the first call allocates the executable's memory
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        print(f"{module.name}: compiled for this CPU in {compile_ms:.1f} ms")
        for line in exe.fallbacks:
            print(f"  fallback: {line}")
    else:
        start = time.perf_counter()
        result = evaluate(module, *args, replicas=count, seed=seed)
        seconds = time.perf_counter() - start
    if count == 1:
        outputs = _flatten(result)
        where = ""
    else:
        outputs = [item for r, value in enumerate(result) for item in _flatten(value, f"r{r}.out")]
        where = f" as {count} replicas" + (" (one thread each)" if backend == "cpu" else "")
    verb = "ran" if backend == "cpu" else "evaluated"
    print(f"{module.name}: {len(args)} input(s), {verb}{where} in {seconds * 1e3:.3f} ms")
    for name, array in outputs:
        print("  " + summarize(name, array))
    if compare and backend == "cpu":
        want = evaluate(exe.module, *args, replicas=count, seed=seed)
        if count == 1:
            _compare(outputs, _flatten(want))
        else:
            _compare(
                outputs,
                [item for r, value in enumerate(want) for item in _flatten(value, f"r{r}.out")],
            )
    if not outputs:
        print("  (no outputs: the result is an empty tuple)")
    if output:
        np.savez(output, **{name: array for name, array in outputs})
        print(f"saved {len(outputs)} output(s) to {output}")
    return 0


def _main_rank(module, args, count, seed, output, compare, np_) -> int:
    """One rank of `uir run --np N`: this process's participant, its
    report printed in rank order."""
    from uir._src.core import distributed
    from uir._src.core.backend import Executable

    distributed.initialize()
    rank, size = distributed.process_index(), distributed.process_count()
    if count != size:
        raise ValueError(f"{module.name} runs as {count} participants; started with --np {size}")
    start = time.perf_counter()
    exe = Executable(module, "cpu")
    compile_ms = (time.perf_counter() - start) * 1e3
    exe(*args)  # warm
    distributed.barrier()
    start = time.perf_counter()
    result = exe(*args)
    seconds = time.perf_counter() - start
    outputs = _flatten(result, f"r{rank}.out")
    lines = [
        f"{module.name}: process {rank} of {size}, compiled in {compile_ms:.1f} ms, "
        f"ran in {seconds * 1e3:.3f} ms"
    ]
    lines += [f"  fallback: {line}" for line in exe.fallbacks]
    lines += ["  " + summarize(name, array) for name, array in outputs]
    if output:
        path = output[:-4] if output.endswith(".npz") else output
        path = f"{path}.r{rank}.npz"
        np.savez(path, **{name: array for name, array in outputs})
        lines.append(f"  saved {len(outputs)} output(s) to {path}")
    import contextlib
    import io

    text = "\n".join(lines)
    if compare:
        want = evaluate(exe.module, *args, replicas=size, seed=seed)[rank]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            _compare(outputs, _flatten(want, f"r{rank}.out"))
        text += "\n" + buf.getvalue().rstrip()
    reports = os.environ.get("UIR_RUN_REPORTS")
    if reports:
        with open(os.path.join(reports, f"r{rank}.txt"), "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    for r in range(size):  # started by mpirun directly: in rank order, as far as it keeps it
        distributed.barrier()
        if r == rank:
            print(text, flush=True)
    return 0
