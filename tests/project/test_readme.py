"""The README's examples run as written: every ```python block is a whole
program (its own imports) that runs from any directory and prints what it
shows, and `uir run` on the bundled example prints finite numbers."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, flags=re.S)


def test_the_readme_has_its_examples():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_each_python_block_runs_alone_from_another_directory(index, tmp_path):
    block = BLOCKS[index]
    assert re.search(r"^import uir", block, flags=re.M), "each block imports what it uses"
    done = subprocess.run(
        [sys.executable, "-c", block],
        cwd=tmp_path,  # not the repository: bundled examples are found through uir.examples
        env={**os.environ, "UIR_FLAGS": ""},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"block {index}:\n{block}\n{done.stderr}"
    assert done.stdout.strip(), f"block {index} prints nothing"


def test_uir_run_on_the_readme_example_prints_finite_numbers(tmp_path):
    uir_cli = [sys.executable, "-m", "uir", "run", str(ROOT / "examples" / "mlp.hlo"), "--compare"]
    done = subprocess.run(uir_cli, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "nan" not in out.lower() and "inf" not in out.lower(), out
    mean = float(re.search(r"mean=([0-9.e+-]+)", out).group(1))
    assert abs(mean - 0.1) < 1e-6  # softmax rows over 10 classes sum to 1
    assert float(re.search(r"max abs diff ([0-9.e+-]+)", out).group(1)) < 1e-5


def test_the_bundled_examples_are_found_by_name():
    import uir.examples

    assert uir.examples.names() == ["jax_solve.hlo", "mlp.hlo", "square.hlo"]
    assert (ROOT / "examples" / "mlp.hlo").resolve() == uir.examples.path("mlp.hlo")
    with pytest.raises(FileNotFoundError, match="no bundled example"):
        uir.examples.path("resnet.hlo")


def test_the_readme_names_its_make_targets():
    for target in ("make demo", "make test", "make test-xla", "make bench"):
        assert target in README
