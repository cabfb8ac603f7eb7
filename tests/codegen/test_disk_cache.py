"""The on-disk executable cache (UIR_FLAGS=--cpu_cache_dir=DIR), which keeps
serialized executables (Executable.serialize): a second process compiling
the same program loads it from the cache (no HLO pass, no LLVM pass runs)
and gets the same results; other options or another program miss; an
altered or truncated entry is a miss that the compile rewrites; an
unwritable directory only loses the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from loop_modules import constant_loop

import uir

_PROGRAM = textwrap.dedent(
    """
    import json, os, sys
    import numpy as np
    import uir, uir.lax as lax, uir.numpy as unp

    def mlp(x, w1, w2):
        h = x @ w1
        h = 0.5 * h * (1 + unp.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
        return lax.fori_loop(0, 3, lambda i, v: v * 0.5 + 1.0, h @ w2)

    # A loop whose body fuses a constant array (tests/loop_modules.py): the
    # compiled loop reads it through the table of constants it is passed.
    LOOP = os.environ["LOOP_HLO"]

    which = sys.argv[1]
    r = np.random.default_rng(0)
    if which == "mlp":
        args = [r.standard_normal(s).astype(np.float32) for s in ((32, 64), (64, 128), (128, 16))]
        compiled = uir.jit(mlp).lower(*args).compile()
    else:
        args = [r.standard_normal(64).astype(np.float32)]
        compiled = uir.compile(uir.hlo.parse_module(LOOP), backend="cpu")
        assert compiled.native_loops == 1
    e = compiled if which == "loop" else compiled.executable
    print(json.dumps({
        "hit": e.cache_hit,
        "passes": e.compile_seconds.get("hlo_passes", 0.0),
        "optimize": e.compile_seconds["llvm_optimize"],
        "result": np.asarray(compiled(*args)).ravel().tolist(),
    }))
    """
)


def _run(tmp_path: Path, which: str = "mlp", flags: str = "") -> dict:
    env = dict(os.environ)
    env["UIR_FLAGS"] = f"--cpu_cache_dir={tmp_path / 'cache'} {flags}".strip()
    env["LOOP_HLO"] = constant_loop(64, 4)[0]
    done = subprocess.run(
        [sys.executable, "-c", _PROGRAM, which],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _entries(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache").glob("*.uirx"))


def test_a_second_process_takes_the_executable_from_the_cache(tmp_path):
    first = _run(tmp_path)
    assert not first["hit"] and first["optimize"] > 0 and first["passes"] > 0
    assert len(_entries(tmp_path)) == 1
    second = _run(tmp_path)
    assert second["hit"] and second["optimize"] == 0 and second["passes"] == 0
    assert second["result"] == first["result"]
    assert len(_entries(tmp_path)) == 1


def test_other_options_miss_and_keep_their_own_entry(tmp_path):
    plain = _run(tmp_path)
    narrow = _run(tmp_path, flags="--cpu_vector_bits=128")
    assert not narrow["hit"]
    assert len(_entries(tmp_path)) == 2
    assert _run(tmp_path, flags="--cpu_vector_bits=128")["hit"]
    np.testing.assert_allclose(narrow["result"], plain["result"], rtol=1e-5)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_an_altered_entry_is_a_miss_that_the_compile_rewrites(tmp_path, damage):
    first = _run(tmp_path)
    (entry,) = _entries(tmp_path)
    data = bytearray(entry.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0x40
    else:
        data = data[: len(data) // 3]
    entry.write_bytes(bytes(data))
    again = _run(tmp_path)
    assert not again["hit"] and again["result"] == first["result"]
    assert _run(tmp_path)["hit"]


def test_a_loop_calling_kernels_on_constants_is_cached_and_runs_in_a_later_process(tmp_path):
    # The compiled loop reads its constant through the table the executable
    # passes it: the machine code holds no address of the first process.
    first = _run(tmp_path, "loop")
    assert not first["hit"] and len(_entries(tmp_path)) == 1
    second = _run(tmp_path, "loop")
    assert second["hit"]
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(second["result"], x * constant_loop(64, 4)[1] ** 4, rtol=1e-5)
    assert first["result"] == second["result"]


def test_a_directory_that_cannot_be_made_only_loses_the_cache(tmp_path):
    # The cache directory would live under a plain file: nothing can be
    # written there, and compiles go on without it.
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    first = _run(blocker)
    assert not first["hit"] and not _run(blocker)["hit"]
    assert blocker.read_text() == "not a directory"


def test_another_build_of_the_core_is_another_entry(tmp_path, monkeypatch):
    # A checkout rebuilt after a change to the compiler keeps uir's version;
    # its executables must not be taken for the earlier build's.
    from uir._src.core import disk_cache

    module = uir.hlo.parse_module(constant_loop(64, 4)[0])
    here = disk_cache.path_for(str(tmp_path), module)
    assert disk_cache.path_for(str(tmp_path), module) == here
    build = disk_cache.core_build()
    assert build != "unknown"
    monkeypatch.setattr(disk_cache, "core_build", lambda: build + "-rebuilt")
    assert disk_cache.path_for(str(tmp_path), module) != here
