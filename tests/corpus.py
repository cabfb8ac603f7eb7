"""Where XLA's corpus lives: ../shared/corpus/xla-hlo beside the checkout,
or $UIR_CORPUS."""

from __future__ import annotations

import csv
import os
import pathlib

import pytest

CORPUS = pathlib.Path(
    os.environ.get(
        "UIR_CORPUS", pathlib.Path(__file__).resolve().parents[2] / "shared" / "corpus" / "xla-hlo"
    )
)

# Whether the corpus is there: a plain clone of the repository has nothing
# beside it, and the tests that read the corpus then skip, saying where it
# goes.
PRESENT = (CORPUS / "MANIFEST.tsv").exists()
MISSING = (
    f"XLA's HLO corpus (152 modules of XLA's tests and MANIFEST.tsv) is not at {CORPUS}: "
    "put it at ../shared/corpus/xla-hlo beside the checkout, or set UIR_CORPUS to its folder"
)
needs_corpus = pytest.mark.skipif(not PRESENT, reason=MISSING)


def manifest_rows() -> list[dict[str, str]]:
    """MANIFEST.tsv's rows; empty when the corpus is missing (the tests over
    them then have no cases, and the presence test skips with MISSING)."""
    path = CORPUS / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# Modules that XLA's own verifier would reject; they come from tests of tools
# that never verify (MLIR import, indexing printers, FileCheck generators).
# Each entry is the reason, and a part of the message our verifier must give.
XLA_REJECTS = {
    "xla_hlo_tools_tests__generate_hlo_test_checks_test_input__4.hlo": (
        "call passes f32[4] operands to a computation whose parameters are f32[]",
        "should have the signature (f32[4], f32[4]) -> f32[]",
    ),
    "xla_hlo_transforms_tests__operand_upcaster__0.hlo": (
        "dot of two rank-1 operands without contracting dims is an outer product, "
        "s32[8,8], but the module declares s32[8]",
        "differs from the inferred s32[8,8]",
    ),
    "xla_hlo_translate_hlo_to_mhlo_tests__import__0.hlo": (
        "convolution.4 has window size 3x3 but its kernel's spatial dimensions are 2x2",
        "window size 3 differs from kernel spatial size 2",
    ),
    "xla_tools__print_indexing_test__0.hlo": (
        "fusion passes s32[1024] to a fused parameter declared s32[]",
        "calls %fused_computation",
    ),
}

# Too much work for a test (each is an XLA benchmark). Those that finish in
# minutes are run by hand with `uir run` (the time it took is noted).
TOO_HEAVY = {
    "xla_backends_cpu_benchmarks_hlo__jax.b380442861__0.hlo": "a while loop of 10^6 iterations over 10^6-element arrays (10^12 element operations)",
    "xla_backends_cpu_benchmarks_hlo__in_place_dynamic_update_slice_fusion__0.hlo": "10^5 loop iterations, each drawing a random index with three threefry loops: ~10^8 instruction evaluations (runs in 30 s)",
    "xla_hlo_translate_hlo_to_mhlo_tests__auto_layout__0.hlo": "a 4096x6144x4608 dot, 1.2e11 multiply-adds (runs in 10 s)",
    "xla_tools_multihost_hlo_runner_data__fp8_gemm_loop__0.hlo": "20 iterations of 32768x8192x1024 fp8 dots, 5.5e12 multiply-adds over 2^28-element arrays",
    "xla_tools_multihost_hlo_runner_data__sharded_computation__0.hlo": "attention over 32x12x512x512, 10^8-element intermediates (runs in 37 s)",
}
