"""uir.config: global switches, as jax.config has them.

uir.config.update("enable_x64", True)   # 64-bit types (off by default)
"""

from __future__ import annotations

import os

_DEFAULTS = {"enable_x64": os.environ.get("UIR_ENABLE_X64", "0") not in ("0", "", "false", "False")}
_values = dict(_DEFAULTS)


def read(name: str):
    try:
        return _values[name]
    except KeyError:
        raise AttributeError(f"uir.config has no option {name!r}") from None


def update(name: str, value) -> None:
    """Sets option `name`. enable_x64: compute with 64-bit types (float64,
    int64, ...) instead of turning them into their 32-bit counterparts."""
    if name not in _values:
        raise AttributeError(f"uir.config has no option {name!r} (options: {sorted(_values)})")
    if name == "enable_x64" and not isinstance(value, bool):
        raise TypeError(f"enable_x64 takes a bool, got {value!r}")
    _values[name] = value


def __getattr__(name: str):
    if name.startswith("jax_"):
        name = name[4:]
    return read(name)
