"""The `uir` command line: `python -m uir` and the installed script."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
from corpus import CORPUS, needs_corpus

import uir
from uir._tools import cli


def _uir(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uir", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_version_flag_prints_the_version():
    result = _uir("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"uir {uir.__version__}"


@pytest.mark.slow
def test_demo_runs_the_main_job_and_succeeds():
    result = _uir("demo", "--size", "100003")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "llvm_version" in out and "cpu_features" in out
    assert "The main job: an MLP block (8x512 -> 2048 -> 512)" in out
    assert "optimized Kernel Graph" in out and "one iGraph, of %" in out
    assert "fallbacks: 0" in out and "result matches NumPy" in out
    assert " uir " in out and " numpy " in out
    assert out.rstrip().endswith("demo finished")


def test_demo_rejects_a_nonpositive_size():
    result = _uir("demo", "--size", "0")
    assert result.returncode == 2
    assert "must be a positive integer" in result.stderr


def test_info_command_prints_the_host():
    result = _uir("info")
    assert result.returncode == 0
    assert uir.info()["cpu"] in result.stdout


def test_no_command_prints_help_and_fails():
    result = _uir()
    assert result.returncode == 2
    assert "demo" in result.stdout


def test_console_script_is_installed():
    script = pathlib.Path(sys.executable).parent / "uir"
    assert script.exists() and os.access(script, os.X_OK)
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert result.stdout.strip() == f"uir {uir.__version__}"


@needs_corpus
def test_run_summarizes_each_output_on_random_inputs():
    result = _uir(
        "run",
        str(CORPUS / "xla_backends_cpu_benchmarks_hlo__mean_axis_1x4096x1024_bf16__0.hlo"),
        "--seed",
        "3",
    )
    assert result.returncode == 0, result.stderr
    assert "jit_mean_axis: compiled for this CPU in" in result.stdout
    assert "jit_mean_axis: 1 input(s), ran in" in result.stdout
    assert "out: bfloat16[1, 4096]  min=" in result.stdout


@needs_corpus
def test_run_on_the_evaluator_and_compare_the_backends():
    path = str(CORPUS / "xla_backends_cpu_benchmarks_hlo__mean_axis_1x4096x1024_bf16__0.hlo")
    result = _uir("run", path, "--backend", "eval")
    assert result.returncode == 0, result.stderr
    assert "jit_mean_axis: 1 input(s), evaluated in" in result.stdout
    result = _uir("run", path, "--compare")
    assert result.returncode == 0, result.stderr
    assert "compared with the evaluator:" in result.stdout
    assert "  out: max abs diff " in result.stdout


def test_run_takes_inputs_and_saves_outputs(tmp_path):
    import numpy as np

    hlo = tmp_path / "m.hlo"
    hlo.write_text(
        "ENTRY e {\n  x = f32[3] parameter(0)\n  ROOT t = (f32[3], f32[3]) tuple(x, x)\n}\n"
    )
    np.savez(tmp_path / "in.npz", np.array([1, 2, 3], np.float32))
    result = _uir(
        "run", str(hlo), "--inputs", str(tmp_path / "in.npz"), "--output", str(tmp_path / "out.npz")
    )
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out.npz") as out:
        np.testing.assert_array_equal(out["out.0"], [1, 2, 3])
        np.testing.assert_array_equal(out["out.1"], [1, 2, 3])


def test_run_reports_a_bad_file_without_a_traceback(tmp_path):
    hlo = tmp_path / "bad.hlo"
    hlo.write_text("ENTRY e {\n  x = f32[3 parameter(0)\n}\n")
    result = _uir("run", str(hlo))
    assert result.returncode == 1
    assert "ParseError" in result.stderr and "bad.hlo:2:" in result.stderr
    assert "Traceback" not in result.stderr


def test_opt_runs_named_passes_and_prints_hlo(tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text(
        "HloModule m\nENTRY main {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
        "  b = f32[4] broadcast(z), dimensions={}\n  ROOT a = f32[4] add(p, b)\n}\n"
    )
    assert cli.main(["opt", str(path), "--passes", "algsimp,dce", "--check"]) == 0
    out = capsys.readouterr().out
    assert "ROOT %p = f32[4]{0} parameter(0)" in out and "add(" not in out
    assert cli.main(["opt", str(path), "--pipeline", "default", "--trace"]) == 0
    captured = capsys.readouterr()
    assert "algsimp" in captured.err and "instructions" in captured.err


def test_opt_unknown_pass_lists_the_available_ones(tmp_path, capsys):
    path = tmp_path / "m.hlo"
    path.write_text("HloModule m\nENTRY main {\n  ROOT p = f32[4] parameter(0)\n}\n")
    assert cli.main(["opt", str(path), "--passes", "nope"]) == 1
    err = capsys.readouterr().err
    assert "unknown pass 'nope'" in err and "algsimp" in err and "dce" in err
