"""Hypothesis strategies for experiments: shapes, dtypes, arrays and random
valid HLO modules (text for uir.hlo.parse_module). Needs Hypothesis."""

from uir._src.tools.strategies import arrays, dtypes, hlo_modules, shapes

__all__ = ["arrays", "dtypes", "hlo_modules", "shapes"]
