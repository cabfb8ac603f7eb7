"""Lowered.as_text(debug_info=True): the traced program as a listing, each
instruction followed by its op and the user's source line that made it."""

from __future__ import annotations

import numpy as np
import pytest

import uir
import uir.numpy as jnp


def scaled_sum(x, y):
    z = jnp.sin(x) * y
    return z.sum()


def test_each_instruction_names_the_source_line_that_made_it():
    lowered = uir.jit(scaled_sum).lower(np.ones(3, np.float32), np.ones(3, np.float32))
    text = lowered.as_text(debug_info=True)
    assert "metadata=" not in text
    sine = next(line for line in text.splitlines() if " sine(" in line)
    assert sine.endswith("# jit(scaled_sum)/sin  test_readable_program.py:14  z = jnp.sin(x) * y")
    reduce = next(line for line in text.splitlines() if " reduce(" in line)
    assert "test_readable_program.py:15  return z.sum()" in reduce
    # Without debug_info, XLA's text with its metadata, which parses back.
    plain = lowered.as_text()
    assert "source_line=14" in plain
    assert uir.hlo.parse_module(plain).to_text() == lowered.module.to_text()
    with pytest.raises(ValueError, match="dialect"):
        lowered.as_text("stablehlo")
