"""Checkpoint policies (uir.checkpoint_policies, as jax.checkpoint_policies):
each says, for an instruction of a checkpointed function, whether the
forward pass keeps its value for the backward pass (True) or the backward
pass recomputes it (False). A policy is any function of an HloInstruction
returning a bool."""

from __future__ import annotations

from uir._src.transforms.custom import name_of


def everything_saveable(inst) -> bool:
    """Keep every value: no recomputation."""
    return True


def nothing_saveable(inst) -> bool:
    """Keep nothing: recompute the whole function (the default)."""
    return False


def dots_saveable(inst) -> bool:
    """Keep the results of matrix products (dot); recompute the rest."""
    return inst.opcode == "dot"


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(inst) -> bool:
    """Keep the results of dots without batch dimensions."""
    return inst.opcode == "dot" and not inst.attributes.get("lhs_batch_dims")


checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


def save_only_these_names(*names: str):
    """Keep only the values marked by checkpoint_name with one of `names`."""
    wanted = frozenset(names)
    return lambda inst: name_of(inst) in wanted


def save_any_names_but_these(*names: str):
    """Keep every value marked by checkpoint_name except those `names`."""
    unwanted = frozenset(names)
    return lambda inst: (n := name_of(inst)) is not None and n not in unwanted


def save_anything_except_these_names(*names: str):
    """Keep every value except those marked with one of `names`."""
    unwanted = frozenset(names)
    return lambda inst: name_of(inst) not in unwanted


def save_from_both_policies(policy_1, policy_2):
    """Keep what either policy keeps."""
    return lambda inst: bool(policy_1(inst)) or bool(policy_2(inst))


__all__ = [
    "checkpoint_dots",
    "checkpoint_dots_with_no_batch_dims",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "nothing_saveable",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
    "save_only_these_names",
]
