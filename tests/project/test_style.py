"""House style is checked with the tests, so CI fails on a formatting slip."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYTHON_DIRS = ["uir", "tests", "benchmarks", "tools"]


def _tool(name: str) -> str:
    path = shutil.which(name) or shutil.which(name, path=str(pathlib.Path(sys.executable).parent))
    if path is None:
        pytest.fail(f"{name} is not installed; `make test` installs it")
    return path


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)


def test_python_passes_ruff_lint():
    result = _run(_tool("ruff"), "check", *PYTHON_DIRS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_python_is_ruff_formatted():
    result = _run(_tool("ruff"), "format", "--check", *PYTHON_DIRS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cpp_is_clang_formatted():
    sources = sorted(
        str(p.relative_to(ROOT)) for p in ROOT.glob("csrc/**/*") if p.suffix in (".h", ".cc")
    )
    assert sources
    result = _run(_tool("clang-format-19"), "--dry-run", "--Werror", *sources)
    assert result.returncode == 0, result.stderr
