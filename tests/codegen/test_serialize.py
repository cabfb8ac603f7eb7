"""Ahead-of-time executables: Executable.serialize() and uir.deserialize().

A blob written in one process loads in another without the HLO passes or
LLVM's optimizer and code generator, and computes the same bits; a damaged,
truncated or foreign blob, or one whose code needs CPU features this host
lacks, is refused with uir.SerializationError."""

from __future__ import annotations

import hashlib
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
import uir.numpy as unp
from uir import lax, nn

_DIGEST = 32  # the SHA-256 that ends every blob


def _mlp(x, w1, w2):
    h = nn.gelu(x @ w1)
    return lax.fori_loop(0, 3, lambda i, v: v * 0.5 + unp.tanh(v), h @ w2)


def _mlp_args(seed: int = 0):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(np.float32) for s in ((32, 64), (64, 128), (128, 16))]


def _mlp_reference(x, w1, w2):
    h = x.astype(np.float64) @ w1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    v = h @ w2
    for _ in range(3):
        v = v * 0.5 + np.tanh(v)
    return v


_LOOP, _TABLE = constant_loop(64, 4)


@pytest.fixture(scope="module")
def mlp():
    args = _mlp_args()
    compiled = uir.jit(_mlp).lower(*args).compile()
    return compiled, args


@pytest.fixture(scope="module")
def blob(mlp):
    return mlp[0].serialize()


def _reseal(body: bytes) -> bytes:
    """`body` with a SHA-256 of it at the end, as a blob is sealed: for
    blobs altered on purpose, to reach the checks after the checksum."""
    return body + hashlib.sha256(body).digest()


def _string_field(text: str) -> bytes:
    """A string as the blob stores it: its length (8 bytes, little-endian)
    and its bytes."""
    data = text.encode()
    return len(data).to_bytes(8, "little") + data


_LOADER = textwrap.dedent(
    """
    import json, sys, time
    import numpy as np
    t0 = time.perf_counter()
    import uir
    t1 = time.perf_counter()
    blob = open(sys.argv[1], "rb").read()
    args = list(np.load(sys.argv[2]).values())
    t2 = time.perf_counter()
    exe = uir.deserialize(blob)
    t3 = time.perf_counter()
    result = exe(*args)
    np.save(sys.argv[3], result)
    print(json.dumps({
        "import_ms": (t1 - t0) * 1e3,
        "load_ms": (t3 - t2) * 1e3,
        "compile_seconds": exe.compile_seconds,
        "native_loops": exe.native_loops,
        "fallbacks": exe.fallbacks,
        "thunk_text": exe.thunk_text,
    }))
    """
)


def _load_elsewhere(tmp_path: Path, data: bytes, args) -> tuple[dict, np.ndarray]:
    (tmp_path / "exe.uirx").write_bytes(data)
    np.savez(tmp_path / "args.npz", *args)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _LOADER,
            str(tmp_path / "exe.uirx"),
            str(tmp_path / "args.npz"),
            str(tmp_path / "out.npy"),
        ],
        env={**os.environ, "UIR_FLAGS": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), np.load(tmp_path / "out.npy")


def test_a_traced_function_serialized_here_runs_in_another_process(tmp_path, mlp, blob):
    compiled, args = mlp
    report, got = _load_elsewhere(tmp_path, blob, args)
    want = compiled(*args)
    assert got.tobytes() == want.tobytes()
    np.testing.assert_allclose(got, _mlp_reference(*args), rtol=2e-4, atol=2e-4)
    # Linked, not compiled: LLVM's emission and optimizer did not run, nor
    # did any HLO pass.
    seconds = report["compile_seconds"]
    assert seconds["llvm_emit"] == 0 and seconds["llvm_optimize"] == 0
    assert "hlo_passes" not in seconds
    assert report["native_loops"] == compiled.executable.native_loops == 1
    assert report["fallbacks"] == compiled.fallbacks == []
    assert report["thunk_text"] == compiled.executable.thunk_text


def test_a_loop_over_constants_serialized_here_runs_in_another_process(tmp_path):
    exe = uir.compile(uir.hlo.parse_module(_LOOP), backend="cpu")
    assert exe.native_loops == 1
    x = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    _, got = _load_elsewhere(tmp_path, exe.serialize(), [x])
    assert got.tobytes() == exe(x).tobytes()
    np.testing.assert_allclose(got, x * _TABLE**4, rtol=1e-5)


def test_a_loaded_executable_is_the_compiled_one(mlp, blob):
    compiled, args = mlp
    exe = uir.deserialize(blob)
    assert isinstance(exe, uir.Executable) and exe.backend == "cpu"
    assert exe.module.to_text(print_metadata=False) == compiled.module.to_text(print_metadata=False)
    assert exe.thunk_text == compiled.executable.thunk_text
    assert exe.kernel_graph.to_text() == compiled.kernel_graph.to_text()
    for seed in range(3):
        a = _mlp_args(seed)
        assert exe(*a).tobytes() == compiled(*a).tobytes()
    # Serializing what was loaded gives the same bytes.
    assert exe.serialize() == blob
    profile = exe.profile(*args)
    assert profile.result.tobytes() == compiled(*args).tobytes()
    assert {row.op for row in profile.rows} >= {"dot.1"} or profile.rows


def test_bytearray_and_memoryview_load_too(blob, mlp):
    compiled, args = mlp
    for data in (bytearray(blob), memoryview(blob)):
        assert uir.deserialize(data)(*args).tobytes() == compiled(*args).tobytes()


@pytest.mark.parametrize("where", [0, 3, 8, 9, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, -1, -33])
def test_a_flipped_bit_anywhere_is_refused(blob, where):
    at = where if isinstance(where, int) else int(len(blob) * where)
    bad = bytearray(blob)
    bad[at] ^= 0x10
    with pytest.raises(uir.SerializationError) as e:
        uir.deserialize(bytes(bad))
    assert isinstance(e.value, uir.Error) and isinstance(e.value, ValueError)
    assert "cannot load this serialized executable" in str(e.value)


@pytest.mark.parametrize("keep", [0, 1, 7, 8, 16, 40, 0.5, 0.9, -1])
def test_a_truncated_blob_is_refused(blob, keep):
    n = keep if isinstance(keep, int) and keep >= 0 else len(blob) + keep
    if isinstance(keep, float):
        n = int(len(blob) * keep)
    with pytest.raises(uir.SerializationError, match=r"cut short|not one"):
        uir.deserialize(blob[:n])


def test_a_blob_with_bytes_added_is_refused(blob):
    with pytest.raises(uir.SerializationError, match="damaged"):
        uir.deserialize(blob + b"\0")
    # Even resealed, bytes after the last field are not part of any blob.
    with pytest.raises(uir.SerializationError, match="after its last field"):
        uir.deserialize(_reseal(blob[:-_DIGEST] + b"\0"))


@pytest.mark.parametrize(
    "data", [b"", b"hello", b"HloModule m\nENTRY e { ROOT p = f32[] parameter(0) }"]
)
def test_bytes_that_are_not_a_blob_are_refused(data):
    with pytest.raises(uir.SerializationError, match="it is not one"):
        uir.deserialize(data)


def test_deserialize_takes_bytes():
    with pytest.raises(TypeError, match="bytes"):
        uir.deserialize("a string")


def test_code_for_a_cpu_feature_this_host_lacks_is_refused(blob):
    # The blob lists the features its code may use: rename one of them to a
    # feature no CPU has (same length, so the layout stays), and reseal.
    feature = next(f for f in uir.info()["cpu_features"] if len(f) >= 4)
    fake = "zz" + "q" * (len(feature) - 2)
    body = blob[:-_DIGEST]
    field = _string_field(feature)
    assert body.count(field) >= 1
    altered = _reseal(body.replace(field, _string_field(fake), 1))
    with pytest.raises(uir.SerializationError) as e:
        uir.deserialize(altered)
    message = str(e.value)
    assert "may use CPU features" in message and fake in message and uir.info()["cpu"] in message


def test_a_blob_from_another_uir_version_is_refused(blob):
    version = uir.__version__
    other = "9" * len(version)
    body = blob[:-_DIGEST].replace(_string_field(version), _string_field(other), 1)
    with pytest.raises(uir.SerializationError, match=f"written by uir {other}; this is uir"):
        uir.deserialize(_reseal(body))


def _with_module_text(blob: bytes, edit) -> bytes:
    """`blob` with its module's text passed through `edit`, resealed."""
    body = blob[:-_DIGEST]
    start = body.index(b"HloModule")
    length = int.from_bytes(body[start - 8 : start], "little")
    text = body[start : start + length].decode()
    changed = edit(text)
    assert changed != text
    return _reseal(body[: start - 8] + _string_field(changed) + body[start + length :])


def test_a_blob_whose_module_lowers_to_other_kernels_is_refused(blob):
    # The module changed after compiling so that its kernels compute
    # something else: the machine code no longer fits it.
    altered = _with_module_text(blob, lambda t: t.replace("tanh(", "exponential(", 1))
    with pytest.raises(uir.SerializationError, match="kernels this uir lowers"):
        uir.deserialize(altered)


def test_a_module_change_that_only_changes_data_still_fits_the_code(mlp, blob):
    # The loop's trip count is a constant in memory that the code reads:
    # changed, the code still fits, and the loaded executable computes the
    # module as it now reads (four steps instead of three).
    compiled, args = mlp
    assert "constant(3)" in compiled.module.to_text()
    exe = uir.deserialize(
        _with_module_text(blob, lambda t: t.replace("constant(3)", "constant(4)", 1))
    )
    h = compiled(*args)
    np.testing.assert_allclose(exe(*args), h * 0.5 + np.tanh(h), rtol=1e-5, atol=1e-6)


def test_only_compiled_code_serializes():
    m = uir.hlo.parse_module(
        "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}"
    )
    with pytest.raises(ValueError, match="only compiled code"):
        uir.compile(m, backend="eval").serialize()
    dynamic = uir.hlo.parse_module(
        "HloModule d\nENTRY e {\n  p = f32[<=4] parameter(0)\n  ROOT n = f32[<=4] negate(p)\n}"
    )
    with pytest.raises(ValueError, match="dynamic size"):
        uir.compile(dynamic, backend="cpu").serialize()


def test_donations_survive_serialization():
    f = uir.jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x = np.arange(1024, dtype=np.float32)
    y = np.ones(1024, np.float32)
    compiled = f.lower(x, y).compile()
    exe = uir.deserialize(compiled.serialize())
    donated = uir.device_put(x)  # 64-byte aligned: written in place
    out = exe.call_donating([donated, y], [0])
    np.testing.assert_array_equal(out, x * 2 + 1)
    # Given no position to donate, the argument is only read.
    kept = x.copy()
    np.testing.assert_array_equal(exe(kept, y), x * 2 + 1)
    np.testing.assert_array_equal(kept, x)


def test_a_custom_call_target_is_found_by_name_where_the_blob_is_loaded(tmp_path):
    name = "uir_test_serialize_double"
    uir.custom_call.register(name, lambda x: (x * 2).astype(np.float32))
    try:
        f = uir.jit(
            lambda x: lax.custom_call(name, (x,), lax.ShapeDtypeStruct(x.shape, x.dtype)) + 1.0
        )
        x = np.arange(8, dtype=np.float32)
        data = f.lower(x).compile().serialize()
        np.testing.assert_array_equal(uir.deserialize(data)(x), x * 2 + 1)
    finally:
        uir.custom_call.unregister(name)
    # In a process where nothing registered the target, the call says so.
    (tmp_path / "cc.uirx").write_bytes(data)
    program = textwrap.dedent(
        f"""
        import numpy as np, uir
        exe = uir.deserialize(open({str(tmp_path / "cc.uirx")!r}, "rb").read())
        try:
            exe(np.arange(8, dtype=np.float32))
        except uir.Error as e:
            print(type(e).__name__, e)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert name in done.stdout
