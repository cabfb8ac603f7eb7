"""XLA's own CPU benchmark modules (corpus xla_backends_cpu_benchmarks_hlo__*)
timed through XLA:CPU (the installed jaxlib, in a child process), uir's CPU
backend (compile time apart) and uir's reference evaluator, on the same
random inputs."""

from __future__ import annotations

import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tools"))


# Modules no backend runs in benchmark time.
TOO_HEAVY_FOR_ANY = {
    "xla_backends_cpu_benchmarks_hlo__jax.b380442861__0.hlo": (
        "10^6 loop iterations over 10^6-element arrays (10^12 element operations)"
    ),
}


def _median_ms(fn, repeats: int) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def run() -> list[dict[str, object]]:
    import xla_reference
    from corpus import CORPUS, TOO_HEAVY

    import uir
    from uir._src.core.evaluate import random_arguments, required_replicas

    try:
        import jax  # noqa: F401
    except ImportError:
        return [{"module": "(all)", "status": "JAX not installed: make bench-deps"}]
    rows = []
    for path in sorted(CORPUS.glob("xla_backends_cpu_benchmarks_hlo__*.hlo")):
        name = path.name.removeprefix("xla_backends_cpu_benchmarks_hlo__").removesuffix("__0.hlo")
        text = path.read_text()
        row: dict[str, object] = {"module": name}
        if "{...}" in text or path.name in TOO_HEAVY_FOR_ANY:
            row["status"] = (
                "skipped: elided constants"
                if "{...}" in text
                else "skipped: " + TOO_HEAVY_FOR_ANY[path.name]
            )
            rows.append(row)
            continue
        module = uir.hlo.parse_module(text)
        if required_replicas(module) > 1 or any(p.shape.is_tuple for p in module.entry.parameters):
            row["status"] = "skipped: needs devices or tuple inputs"
            rows.append(row)
            continue
        inputs = random_arguments(module, seed=0)
        t0 = time.perf_counter()
        compiled = uir.compile(module, backend="cpu")
        row["uir_compile_ms"] = (time.perf_counter() - t0) * 1e3
        row["uir_ms"] = _median_ms(lambda c=compiled, a=inputs: c(*a), 5)
        if path.name not in TOO_HEAVY:
            row["uir_eval_ms"] = _median_ms(lambda m=module, a=inputs: uir.evaluate(m, *a), 3)
        with tempfile.TemporaryDirectory() as d:
            hlo = pathlib.Path(d) / "m.hlo"
            hlo.write_text(text)
            xla_reference.save_arrays(pathlib.Path(d) / "in.npz", inputs)
            result = subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "tools" / "xla_reference.py"),
                    str(hlo),
                    "--inputs",
                    str(pathlib.Path(d) / "in.npz"),
                    "--time",
                    "10",
                ],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
        fields = (
            dict(kv.split("=") for kv in result.stdout.split() if "=" in kv)
            if result.returncode == 0
            else {}
        )
        if "xla_ms" in fields:
            row["xla_ms"] = float(fields["xla_ms"])
            row["xla_compile_ms"] = float(fields["compile_ms"])
            row["xla_over_uir"] = row["xla_ms"] / row["uir_ms"]
            row["status"] = "ok"
        else:
            row["status"] = "XLA failed: " + (result.stderr.strip().splitlines() or ["?"])[-1][:80]
        rows.append(row)
    return rows


if __name__ == "__main__":
    from run import print_table

    print_table(run())
