"""The CPU backend's compile flags are written once (codegen/compile_flags.def):
the table uir._core.codegen.compile_flags() gives is what KernelGraph.compile
takes by keyword, what UIR_FLAGS parses as --cpu_<name>, what a serialized
executable stores, what `uir info` prints and what the README lists."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import uir
from uir import _core
from uir._src.core.compile_options import compile_options as _compile_options

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = _core.codegen.compile_flags()
NAMES = [row["name"] for row in TABLE]


def _kernel_graph():
    m = uir.hlo.parse_module(
        "ENTRY e {\n  p = f32[64] parameter(0)\n  ROOT r = f32[64] exponential(p)\n}\n"
    )
    return uir.igraph.lower(m)


def test_the_table_names_each_flag_once_with_a_kind_a_default_and_a_doc():
    assert len(set(NAMES)) == len(NAMES) >= 6
    for row in TABLE:
        assert row["kind"] in ("vector_bits", "bytes", "count", "switch"), row
        assert isinstance(row["default"], bool if row["kind"] == "switch" else int), row
        assert len(row["doc"]) > 20, row
    code = {row["name"] for row in TABLE if row["shapes_code"]}
    assert code == {"vector_bits", "streaming_bytes", "target_math", "prefetch"}


def test_compile_takes_every_flag_by_name_and_refuses_others():
    kg = _kernel_graph()
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    for row in TABLE:
        value = (not row["default"]) if row["kind"] == "switch" else row["default"]
        if row["kind"] == "vector_bits":
            value = 256
        exe = kg.compile(**{row["name"]: value})
        np.testing.assert_allclose(exe.run([x]), np.exp(x), rtol=1e-6)
    with pytest.raises(ValueError, match=r"unknown compile flag 'vectorbits'.*vector_bits"):
        kg.compile(vectorbits=256)
    with pytest.raises(ValueError, match=r"vector_bits \(UIR_FLAGS --cpu_vector_bits\)"):
        kg.compile(vector_bits=300)
    with pytest.raises(ValueError, match=r"concurrent_bytes .* must be >= 0"):
        kg.compile(concurrent_bytes=-1)
    with pytest.raises(TypeError, match="compile flag prefetch takes an integer"):
        kg.compile(prefetch="no")


def test_uir_flags_are_parsed_from_the_table(monkeypatch):
    monkeypatch.setenv("UIR_FLAGS", "--cpu_vector_bits=256 --cpu_prefetch=0 --cpu_target_math")
    assert _compile_options() == {"vector_bits": 256, "prefetch": False, "target_math": True}
    monkeypatch.setenv("UIR_FLAGS", "--cpu_prefetch=maybe")
    with pytest.raises(ValueError, match="cpu_prefetch must be 0 or 1"):
        _compile_options()
    monkeypatch.setenv("UIR_FLAGS", "--cpu_compile_threads=two")
    with pytest.raises(ValueError, match="cpu_compile_threads must be an integer"):
        _compile_options()


def test_a_serialized_executable_keeps_the_flags_its_code_was_compiled_with():
    kg = _kernel_graph()
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    plain = kg.compile().serialize()
    narrow = kg.compile(vector_bits=128, target_math=False, prefetch=False, streaming_bytes=0)
    blob = narrow.serialize()
    assert blob != plain
    np.testing.assert_allclose(uir.deserialize(blob)(x), np.exp(x), rtol=1e-6)


def test_uir_info_and_the_readme_list_every_flag():
    out = subprocess.run(
        [sys.executable, "-m", "uir", "info"], capture_output=True, text=True, check=True
    ).stdout
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"--cpu_(\w+)", readme))
    for name in NAMES:
        assert f"--cpu_{name}=" in out, name
        assert name in listed, f"README.md does not document --cpu_{name}"
    assert listed - set(NAMES) <= {"cache_dir"}, listed - set(NAMES)


def test_an_unknown_flag_is_refused_naming_the_nearest_known_one(monkeypatch):
    from uir._src.core.passes import known_flags

    x = np.ones(3, np.float32)
    for given, nearest in (
        ("--check_pases", "--check_passes"),
        ("--cpu_vectorbits=256", "--cpu_vector_bits"),
    ):
        monkeypatch.setenv("UIR_FLAGS", given)
        with pytest.raises(ValueError, match=f"unknown flag .*did you mean {nearest}"):
            uir.jit(lambda v: v + 1)(x)
    monkeypatch.setenv("UIR_FLAGS", "--no_such_thing")
    with pytest.raises(ValueError, match="unknown flag --no_such_thing \\(known: --backend"):
        uir.jit(lambda v: v + 2)(x)
    # Every flag the table or the Python side reads is known.
    assert {"cpu_vector_bits", "dump_to", "fallback", "cpu_cache_dir"} <= set(known_flags())
