"""How uir drives LLVM's optimizer: tile loops reach the loop vectorizer
whole (ResNet-50's kernels are vector code in short blocks, which is also
what keeps its compile near XLA's), and UIR_LLVM_OPTIONS passes LLVM's own
options through, a bad one being a clear error."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from corpus import CORPUS, needs_corpus

import uir
from uir._src.core.backend import Executable

RESNET = "xla_backends_cpu_benchmarks_hlo__resnet50_keras_jax_f32__0.hlo"


def _block_lengths(ir: str) -> list[int]:
    lengths, n = [], 0
    for line in ir.splitlines():
        if line.startswith("define") or re.match(r"^[\w.]+:", line):
            lengths.append(n)
            n = 0
        elif line.startswith("  "):
            n += 1
    return [*lengths, n]


@needs_corpus
def test_resnet_kernels_are_vector_code_in_short_blocks():
    module = uir.hlo.parse_module((CORPUS / RESNET).read_text())
    ir = Executable(module, "cpu").llvm_ir
    scalar = ir.count("load float,")
    vector = len(re.findall(r"load <\d+ x float>", ir))
    # With LLVM's default (tile loops of 64 trips unrolled before the
    # vectorizers run) the longest block had 2,615 instructions and 13,986
    # scalar loads stood beside 4,725 vector ones.
    assert max(_block_lengths(ir)) < 1000
    assert scalar < 0.1 * vector, (scalar, vector)


def _run_with_llvm_options(options: str) -> subprocess.CompletedProcess:
    code = (
        "import numpy as np, uir\n"
        "try:\n"
        "    print(uir.jit(lambda x: x + 1)(np.ones(3, np.float32)))\n"
        "except uir.ParseError as e:\n"
        "    print('ParseError:', e)\n"
    )
    env = {**os.environ, "UIR_LLVM_OPTIONS": options}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


def test_llvm_options_reach_llvm():
    done = _run_with_llvm_options("-unroll-full-max-count=4 -vectorize-loops=false")
    assert done.returncode == 0, done.stderr
    assert "[2. 2. 2.]" in done.stdout


def test_an_unknown_llvm_option_is_a_parse_error_not_an_exit():
    done = _run_with_llvm_options("-no-such-option")
    assert done.returncode == 0, done.stderr
    assert "ParseError: UIR_LLVM_OPTIONS: LLVM refused the options" in done.stdout
    assert "no-such-option" in done.stdout
