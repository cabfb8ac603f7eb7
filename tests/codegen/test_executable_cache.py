"""The in-process executable cache: the same program compiled again is the
same executable; other shapes, flags or backends are not; dumps bypass it."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import uir
import uir.numpy as unp
from uir._src.core import backend


@pytest.fixture(autouse=True)
def _fresh_cache():
    backend.clear_cache()
    yield
    backend.clear_cache()


def _f(x):
    return unp.tanh(x @ x) + 1.0


def test_a_function_traced_again_reuses_its_executable():
    x = np.ones((16, 16), np.float32)
    first = uir.jit(_f).lower(x).compile()
    second = uir.jit(_f).lower(x).compile()
    assert second.executable is first.executable
    assert backend.cache_info()["hits"] == 1 and backend.cache_info()["entries"] == 1
    np.testing.assert_allclose(second(x), np.tanh(x @ x) + 1.0, rtol=1e-6)


def test_a_module_parsed_twice_is_one_executable_and_its_input_stays_untouched():
    text = """HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
}"""
    a = uir.hlo.parse_module(text)
    b = uir.hlo.parse_module(text)
    assert uir.compile(a) is uir.compile(b)
    assert a.to_text() == b.to_text()  # neither was optimized in place
    assert uir.compile(a, backend="eval") is not uir.compile(a)


def test_other_shapes_and_other_flags_compile_anew(monkeypatch):
    x, y = np.ones((16, 16), np.float32), np.ones((8, 8), np.float32)
    base = uir.jit(_f).lower(x).compile().executable
    assert uir.jit(_f).lower(y).compile().executable is not base
    monkeypatch.setenv("UIR_FLAGS", "--cpu_vector_bits=256")
    assert uir.jit(_f).lower(x).compile().executable is not base
    monkeypatch.setenv("UIR_FLAGS", "--executable_cache=false")
    again = uir.jit(_f).lower(x).compile().executable
    assert again is not uir.jit(_f).lower(x).compile().executable


def test_dumps_are_written_on_every_compile(monkeypatch, tmp_path):
    x = np.ones((16, 16), np.float32)
    uir.jit(_f).lower(x).compile()
    monkeypatch.setenv("UIR_FLAGS", f"--dump_to={tmp_path}")
    uir.jit(_f).lower(x).compile()
    assert list(tmp_path.glob("*ir-with-opt.ll")), sorted(p.name for p in tmp_path.iterdir())


def test_the_cache_keeps_the_most_recent_executables():
    for n in range(1, backend._CACHE_SIZE + 6):
        uir.jit(_f).lower(np.ones((n, n), np.float32)).compile()
    assert backend.cache_info()["entries"] == backend._CACHE_SIZE
    newest = uir.jit(_f).lower(np.ones((n, n), np.float32)).compile()
    assert backend.cache_info()["hits"] == 1 and newest is not None


def test_threads_compiling_one_program_get_working_executables():
    x = np.full((32, 32), 0.01, np.float32)
    results: list = [None] * 4

    def work(k):
        results[k] = uir.jit(_f).lower(x).compile()(x)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_allclose(r, np.tanh(x @ x) + 1.0, rtol=1e-6)
    assert backend.cache_info()["entries"] == 1
