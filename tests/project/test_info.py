"""uir.__version__ and uir.info(): LLVM is linked and sees the host."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys

import pytest

import uir


def test_version_matches_package_metadata():
    assert uir.__version__ == importlib.metadata.version("uir")


def test_info_has_every_documented_key_with_its_type():
    data = uir.info()
    assert set(data) == {
        "version",
        "llvm_version",
        "host_triple",
        "cpu",
        "cpu_features",
        "threads",
        "blas_core",
    }
    assert data["version"] == uir.__version__
    assert isinstance(data["cpu"], str) and data["cpu"]
    assert isinstance(data["threads"], int) and data["threads"] >= 1
    assert isinstance(data["blas_core"], str)


def test_info_reports_llvm_19():
    assert uir.info()["llvm_version"].startswith("19.")


def test_info_host_triple_names_this_machine():
    arch = uir.info()["host_triple"].split("-")[0]
    machine = platform.machine()
    assert arch == {"AMD64": "x86_64", "arm64": "aarch64"}.get(machine, machine)


def test_info_cpu_features_are_llvm_names_sorted():
    features = uir.info()["cpu_features"]
    assert features == sorted(features)
    assert all(isinstance(f, str) and f and not f.startswith("+") for f in features)
    if platform.machine() == "x86_64":
        # Every x86-64 CPU has SSE2; LLVM must have detected real features.
        assert "sse2" in features


def test_info_returns_a_fresh_dict_each_call():
    first = uir.info()
    first["cpu_features"].clear()
    assert uir.info()["cpu_features"]


def test_num_threads_follows_uir_num_threads(run_python):
    result = run_python("import uir; print(uir.info()['threads'])", env={"UIR_NUM_THREADS": "3"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "3"


@pytest.mark.parametrize("value", ["zero", "0", "-2", "4x"])
def test_bad_uir_num_threads_is_a_clear_error(run_python, value):
    result = run_python(
        "import uir\n"
        "try:\n"
        "    uir.info()\n"
        "except uir.ParseError as e:\n"
        "    print('ParseError:', e)\n",
        env={"UIR_NUM_THREADS": value},
    )
    assert result.returncode == 0, result.stderr
    assert f"UIR_NUM_THREADS must be a positive integer, got '{value}'" in result.stdout


def test_blas_kernels_are_named_from_the_cpus_features():
    from uir._src.core import blas_core

    assert blas_core.core_for({"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}) == (
        "SkylakeX"
    )
    assert blas_core.core_for({"avx", "avx2", "fma"}) == "Haswell"
    assert blas_core.core_for({"sse2"}) is None
    core = uir.info()["blas_core"]
    assert core
    # Without OPENBLAS_CORETYPE set by the user, the kernels are those the
    # flags allow (Debian's OpenBLAS otherwise falls back to SSE3 ones on
    # CPUs newer than itself).
    want = blas_core.core_for(blas_core._flags())
    if want is not None and os.environ.get("OPENBLAS_CORETYPE") == want:
        assert core == want


def test_a_users_openblas_coretype_is_kept():
    env = dict(os.environ, OPENBLAS_CORETYPE="Haswell")
    out = subprocess.run(
        [sys.executable, "-c", "import os, uir; print(os.environ['OPENBLAS_CORETYPE'])"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "Haswell"
