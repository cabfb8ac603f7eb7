"""What the extension exports and links against."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from uir import _core


def _readelf(*args: str) -> str:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.fail("readelf (binutils, installed with g++) is needed to inspect the extension")
    return subprocess.run(
        [readelf, "--wide", *args, _core.__file__], capture_output=True, text=True, check=True
    ).stdout


def test_extension_exports_only_its_init_function():
    exported = set()
    for line in _readelf("--dyn-syms").splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        # pybind11's thread-local frame pointer is a TLS symbol, not an API.
        defined = len(fields) >= 8 and fields[6] != "UND" and fields[3] != "TLS"
        if defined and fields[4] in ("GLOBAL", "WEAK"):
            exported.add(fields[7])
    assert exported == {"PyInit__core"}


def test_extension_carries_llvm_inside_instead_of_linking_libllvm():
    needed = [line for line in _readelf("--dynamic").splitlines() if "(NEEDED)" in line]
    assert needed, "no NEEDED entries: readelf output changed?"
    assert not [line for line in needed if "LLVM" in line], needed
    assert any("libtbb" in line for line in needed)
