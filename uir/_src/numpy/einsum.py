"""jax.numpy.einsum: contractions as pairwise dot_generals."""

from __future__ import annotations

from uir._src.core import ops
from uir._src.core.eager import eager
from uir._src.core.ops import asarray, fail
from uir._src.numpy.reductions import sum
from uir._src.numpy.util import no_out

# --- einsum, cumulative ops, sorting -----------------------------------------------


def _einsum_pair(a, sa: str, b, sb: str, keep: str):
    """Contracts two operands with subscripts sa, sb, keeping the letters in
    `keep` (in any order); returns the result and its subscripts."""

    # Letters only in one operand and not kept are summed first.
    def pre_sum(x, s, other):
        drop = [i for i, c in enumerate(s) if c not in other and c not in keep]
        if drop:
            x = sum(x, axis=tuple(drop))
            s = "".join(c for i, c in enumerate(s) if i not in drop)
        return x, s

    a, sa = pre_sum(a, sa, sb)
    b, sb = pre_sum(b, sb, sa)
    batch = [c for c in sa if c in sb and c in keep]
    contract = [c for c in sa if c in sb and c not in keep]
    out = ops.dot(
        a,
        b,
        ([sa.index(c) for c in contract], [sb.index(c) for c in contract]),
        ([sa.index(c) for c in batch], [sb.index(c) for c in batch]),
        "einsum",
    )
    s = (
        "".join(batch)
        + "".join(c for c in sa if c not in sb)
        + "".join(c for c in sb if c not in sa)
    )
    return out, s


@eager
def einsum(
    subscripts: str,
    /,
    *operands,
    out=None,
    optimize="auto",
    precision=None,
    preferred_element_type=None,
    _dot_general=None,
    out_sharding=None,
):
    """Einstein summation, lowered to dot_general, reductions and transposes
    (two operands at a time, left to right). Explicit ('ij,jk->ik') and
    implicit ('ij,jk') forms; no repeated letters within one operand.
    `optimize` (the contraction order) and `precision` change nothing here;
    `preferred_element_type` is the result's type, as in jax.numpy.dot."""
    no_out("einsum", out)
    if preferred_element_type is not None and operands:
        from uir._src.numpy.products import _for_result

        first, _, after = _for_result(operands[0], operands[0], preferred_element_type)
        converted = [first] + [_for_result(o, o, preferred_element_type)[0] for o in operands[1:]]
        result = einsum(subscripts, *converted)
        return result if after is None else ops.convert(result, after)
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        fail("einsum", "ellipsis subscripts are not supported")
    if "->" in spec:
        inputs, output = spec.split("->")
    else:
        inputs = spec
        letters = inputs.replace(",", "")
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    subs = inputs.split(",")
    if len(subs) != len(operands):
        fail("einsum", f"{len(subs)} subscripts for {len(operands)} operands")
    xs = [asarray(o) for o in operands]
    for s, x in zip(subs, xs, strict=True):
        if len(s) != x.ndim:
            fail("einsum", f"subscripts {s!r} for {ops.describe(x)}")
        if len(set(s)) != len(s):
            fail("einsum", f"repeated subscripts within {s!r} (diagonals) are not supported")
    sizes = {}
    for s, x in zip(subs, xs, strict=True):
        for c, n in zip(s, x.shape, strict=True):
            if sizes.setdefault(c, n) != n:
                fail("einsum", f"letter {c!r} has sizes {sizes[c]} and {n}")
    acc, s_acc = xs[0], subs[0]
    for k in range(1, len(xs)):
        later = "".join(subs[k + 1 :])
        keep = "".join(sorted(set(output + later)))
        acc, s_acc = _einsum_pair(acc, s_acc, xs[k], subs[k], keep)
    drop = [i for i, c in enumerate(s_acc) if c not in output]
    if drop:
        acc = sum(acc, axis=tuple(drop))
        s_acc = "".join(c for i, c in enumerate(s_acc) if i not in drop)
    return ops.transpose(acc, [s_acc.index(c) for c in output])


__all__ = [
    "einsum",
]
