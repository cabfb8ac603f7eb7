"""uir.evaluate: run an HLO module on NumPy arrays with the reference evaluator."""

from __future__ import annotations

import numpy as np

from uir import _core
from uir._src.core.dtypes import numpy_dtype
from uir._src.core.errors import ArgumentError


def _check_value(shape, value, where: str):
    """`value` as the arrays (nested tuples for tuple shapes) that `shape`
    takes; ArgumentError (a TypeError and a ValueError) naming `where`
    otherwise."""
    if shape.is_tuple:
        if not isinstance(value, (tuple, list)):
            raise ArgumentError(f"{where} takes a tuple {shape}, got {type(value).__name__}")
        elements = shape.tuple_shapes
        if len(value) != len(elements):
            raise ArgumentError(
                f"{where} takes a tuple of {len(elements)}, got {len(value)} elements"
            )
        return tuple(
            _check_value(s, v, f"{where}, element {i}")
            for i, (s, v) in enumerate(zip(elements, value, strict=True))
        )
    if shape.element_type == "token":
        raise ArgumentError(f"{where} takes a token, which uir.evaluate cannot pass")
    want = numpy_dtype(shape.element_type)
    array = np.asarray(value)
    if array.dtype.newbyteorder("=") != want:
        raise ArgumentError(f"{where} takes {want}, got {array.dtype}")
    dynamic = shape.dynamic_dims
    fits = len(array.shape) == len(shape.dims) and all(
        got == bound or (dyn and got <= bound)
        for got, bound, dyn in zip(array.shape, shape.dims, dynamic, strict=True)
    )
    if not fits:
        wanted = ", ".join(
            f"<={b}" if d else str(b) for b, d in zip(shape.dims, dynamic, strict=True)
        )
        raise ArgumentError(f"{where} takes shape ({wanted}), got {array.shape}")
    return array


def _check_argument(param, value):
    where = f"parameter {param.attributes['parameter_number']} (%{param.name}: {param.shape})"
    return _check_value(param.shape, value, where)


def evaluate(module, *arrays, replicas: int = 1, seed: int = 0, per_replica: bool = False):
    """Runs `module`'s entry computation on NumPy arrays with the reference
    evaluator. Returns an array, or a tuple of them for a tuple result.

    A dynamic dimension (`f32[<=8]`) takes an array of any size up to its
    bound and comes back at its actual size; ops read only the valid
    entries, as XLA's dynamic padder arranges.

    With `replicas` > 1 the module runs as that many participants (replicas
    times partitions), each on the same arrays; collectives exchange data
    between them, replica-id tells them apart. The result is then a list,
    one per participant. required_replicas(module) says how many a module's
    collectives need. With `per_replica=True` each participant gets its own
    inputs: every array carries a leading axis of length `replicas` and
    participant i runs on index i of it (as jax.pmap maps over axis 0); the
    result is then always a list. rng ops draw deterministically from `seed`."""
    params = module.entry.parameters
    if len(arrays) != len(params):
        raise ArgumentError(f"{module.name} takes {len(params)} arguments, got {len(arrays)}")
    if not isinstance(replicas, int) or replicas < 1:
        raise ValueError(f"replicas must be a positive int, got {replicas!r}")
    if not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an int in [0, 2**64), got {seed!r}")
    if per_replica:
        per = [
            [
                _check_argument(p, _participant_slice(a, i, replicas, p))
                for p, a in zip(params, arrays, strict=True)
            ]
            for i in range(replicas)
        ]
        return _core.eval.evaluate_per_participant(module, per, seed)
    args = [_check_argument(p, a) for p, a in zip(params, arrays, strict=True)]
    return _core.eval.evaluate(module, args, replicas, seed)


def _participant_slice(value, i: int, replicas: int, param):
    """Participant i's part of `value`: index i along the leading axis of
    every array in it."""
    if isinstance(value, (tuple, list)):
        return tuple(_participant_slice(v, i, replicas, param) for v in value)
    array = np.asarray(value)
    if array.ndim == 0 or array.shape[0] != replicas:
        raise ValueError(
            f"parameter {param.attributes['parameter_number']} (%{param.name}: {param.shape}) "
            f"with per_replica=True takes a leading axis of {replicas} participants, "
            f"got shape {array.shape}"
        )
    return array[i]


def required_replicas(module) -> int:
    """How many participants `module` runs as: replica_count x num_partitions,
    or more if its collectives name more."""
    return _core.eval.required_replicas(module)


def random_value(shape, rng: np.random.Generator):
    """A random value for `shape`: small non-negative integers (safe as
    indices), booleans, standard-normal floats; tuples of them for tuples."""
    if shape.is_tuple:
        return tuple(random_value(s, rng) for s in shape.tuple_shapes)
    dtype = numpy_dtype(shape.element_type)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape.dims).astype(bool)
    if np.issubdtype(dtype, np.integer) or dtype.name in ("int2", "int4", "uint2", "uint4"):
        return rng.integers(0, 4, shape.dims).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.standard_normal(shape.dims) + 1j * rng.standard_normal(shape.dims)).astype(
            dtype
        )
    return rng.standard_normal(shape.dims).astype(np.float32).astype(dtype)


def random_arguments(module, seed: int = 0) -> list:
    """Random inputs suited to each entry parameter (see random_value)."""
    rng = np.random.default_rng(seed)
    return [random_value(p.shape, rng) for p in module.entry.parameters]


def checked_arguments(module, arrays) -> list:
    """`arrays` checked against `module`'s entry parameters (the count, each
    one's dtype and dims); a module of None (a loaded GPU executable, which
    checks its arrays itself) takes them as arrays."""
    if module is None:
        return [np.asarray(a) for a in arrays]
    params = module.entry.parameters
    if len(arrays) != len(params):
        raise ArgumentError(f"{module.name} takes {len(params)} arguments, got {len(arrays)}")
    return [_check_argument(p, a) for p, a in zip(params, arrays, strict=True)]
