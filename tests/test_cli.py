"""The `uir` command line: `python -m uir` and the installed script."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import uir


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


def test_demo_runs_the_jit_check_and_succeeds():
    result = _uir("demo", "--size", "100003")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "llvm_version" in out and "cpu_features" in out
    assert "100003 elements: matches NumPy exactly" in out
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
