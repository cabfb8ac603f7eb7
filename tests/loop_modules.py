"""A while loop whose body fuses a constant array, for tests of compiled
loops: the compiled loop reads the constant through the table of constants
the executable passes it."""

from __future__ import annotations

import numpy as np


def constant_loop(size: int = 64, trips: int = 4) -> tuple[str, np.ndarray]:
    """(HLO text, table): x multiplied by `table` (0.5 to 1.5, `size`
    floats) `trips` times in a while loop."""
    table = np.linspace(0.5, 1.5, size, dtype=np.float32)
    values = ", ".join(str(v) for v in table)
    text = f"""HloModule loop_with_constant
fc {{
  a = f32[{size}] parameter(0)
  c = f32[{size}] constant({{{values}}})
  ROOT m = f32[{size}] multiply(a, c)
}}
body {{
  t = (s32[], f32[{size}]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  v = f32[{size}] get-tuple-element(t), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[{size}] fusion(v), kind=kLoop, calls=fc
  ROOT r = (s32[], f32[{size}]) tuple(j, w)
}}
cond {{
  t = (s32[], f32[{size}]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  trips = s32[] constant({trips})
  ROOT lt = pred[] compare(i, trips), direction=LT
}}
ENTRY e {{
  x = f32[{size}] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[{size}]) tuple(zero, x)
  w = (s32[], f32[{size}]) while(t), condition=cond, body=body
  ROOT v = f32[{size}] get-tuple-element(w), index=1
}}
"""
    return text, table
