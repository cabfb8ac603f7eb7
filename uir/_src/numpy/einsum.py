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


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _from_sublists(*args):
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]): NumPy's
    interleaved form, as a subscript string and the operands."""
    args = list(args)
    output = args.pop() if len(args) % 2 == 1 else None
    operands, lists = args[0::2], args[1::2]

    def letters(sublist) -> str:
        out = []
        for v in sublist:
            if v is Ellipsis:
                out.append("...")
            elif isinstance(v, int) and 0 <= v < len(_LETTERS):
                out.append(_LETTERS[v])
            else:
                fail("einsum", f"sublist entries must be integers in [0, 52) or ..., got {v!r}")
        return "".join(out)

    spec = ",".join(letters(s) for s in lists)
    if output is not None:
        spec += "->" + letters(output)
    return spec, operands


def _parse(spec: str, xs) -> tuple[list[str], str, str]:
    """Each operand's subscripts and the output's, with '...' replaced by
    letters of their own (right-aligned across operands, as broadcasting
    aligns them); the implicit output is the ellipsis then the letters
    used once, sorted."""
    inputs, arrow, output = spec.partition("->")
    subs = inputs.split(",")
    if len(subs) != len(xs):
        fail("einsum", f"{len(subs)} subscripts for {len(xs)} operands")
    used = set(spec) - set(",->.")
    spare = [c for c in _LETTERS if c not in used]
    counts = []
    for s, x in zip(subs, xs, strict=True):
        named = len(s.replace("...", ""))
        if "..." in s:
            if s.count("...") > 1:
                fail("einsum", f"more than one ellipsis in {s!r}")
            counts.append(x.ndim - named)
        elif named != x.ndim:
            fail("einsum", f"subscripts {s!r} for {ops.describe(x)}")
        else:
            counts.append(0)
        if counts[-1] < 0:
            fail("einsum", f"subscripts {s!r} for {ops.describe(x)}")
    width = max(counts, default=0)
    if width > len(spare):
        fail("einsum", "too many dimensions under the ellipsis")
    ellipsis = "".join(spare[:width])
    subs = [s.replace("...", ellipsis[width - n :]) for s, n in zip(subs, counts, strict=True)]
    if arrow:
        if width and "..." not in output:
            fail(
                "einsum",
                f"the output of {spec!r} drops the dimensions under '...' (as NumPy, refused)",
            )
        output = output.replace("...", ellipsis)
    else:
        letters = "".join(c for c in "".join(subs) if c not in ellipsis)
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(output)) != len(output):
        fail("einsum", f"repeated subscripts in the output {output!r}")
    return subs, output, ellipsis


def _diagonals(x, s: str):
    """x with each letter repeated within its subscripts s taken along the
    diagonal (NumPy's 'ii->i'), and the subscripts that remain."""
    from uir._src.numpy.creation import diagonal

    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i = s.index(c)
        j = s.index(c, i + 1)
        if x.shape[i] != x.shape[j]:
            fail("einsum", f"letter {c!r} repeated with sizes {x.shape[i]} and {x.shape[j]}")
        x = diagonal(x, 0, i, j)
        s = "".join(ch for k, ch in enumerate(s) if k not in (i, j)) + c
    return x, s


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
    if not isinstance(subscripts, str):
        subscripts, operands = _from_sublists(subscripts, *operands)
    xs = [asarray(o) for o in operands]
    subs, output, ellipsis = _parse(subscripts.replace(" ", ""), xs)
    for k, (s, x) in enumerate(zip(subs, xs, strict=True)):
        xs[k], subs[k] = _diagonals(x, s)
    # The ellipsis' dimensions broadcast: size 1 stretches to the others'.
    for c in ellipsis:
        n = max((x.shape[s.index(c)] for s, x in zip(subs, xs, strict=True) if c in s), default=1)
        for k, (s, x) in enumerate(zip(subs, xs, strict=True)):
            if c in s and x.shape[s.index(c)] == 1 and n != 1:
                shape = list(x.shape)
                shape[s.index(c)] = n
                xs[k] = ops.broadcast_to(x, tuple(shape), "einsum")
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
