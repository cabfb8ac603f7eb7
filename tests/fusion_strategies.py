"""Hypothesis strategies shared by the Unified IR and CPU backend property
tests: random fusion-shaped modules over awkward shapes."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

DIMS = [1, 2, 3, 5, 7, 13, 31, 64, 97]  # ones, primes, a power of two
UNARY = ["negate", "abs", "exponential", "tanh", "sine", "floor", "sqrt"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "divide"]


@st.composite
def fusion_modules(draw):
    """An entry over p0, p1 of one random shape (rank 1 to 3), built from the
    ops a fusion lowers: elementwise ops, broadcasts of smaller operands,
    transposes, reshapes, slices, reverses, concatenates, pads, iota,
    compare/select/convert, row and column reductions and reductions
    broadcast back along their rows."""
    rank = draw(st.integers(1, 3))
    dims = [draw(st.sampled_from(DIMS)) for _ in range(rank)]
    if rank == 1 and draw(st.integers(0, 9)) == 0:
        dims = [1000003]  # prime and past every tile: tails everywhere
    s = f"f32[{','.join(map(str, dims))}]"
    lines: list[str] = []
    values = ["p0", "p1"]
    counter = iter(range(10_000))

    def new(text: str) -> str:
        name = f"v{next(counter)}"
        lines.append(f"  {name} = {text}")
        return name

    def shape(ds) -> str:
        return f"f32[{','.join(map(str, ds))}]"

    last = rank - 1
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.integers(0, 11))
        x = draw(st.sampled_from(values))
        y = draw(st.sampled_from(values))
        if kind == 0:
            op = draw(st.sampled_from(UNARY))
            if op == "sqrt":
                x = new(f"{s} abs({x})")
            values.append(new(f"{s} {op}({x})"))
        elif kind == 1:
            op = draw(st.sampled_from(BINARY))
            if op == "divide":
                one = new("f32[] constant(1)")
                ones = new(f"{s} broadcast({one}), dimensions={{}}")
                y = new(f"{s} add({new(f'{s} abs({y})')}, {ones})")
            values.append(new(f"{s} {op}({x}, {y})"))
        elif kind == 2:
            # an operand of fewer dims broadcast in
            keep = sorted(draw(st.sets(st.integers(0, last), max_size=rank)))
            ranges = ", ".join(f"[0:{dims[d]}]" if d in keep else "[0:1]" for d in range(rank))
            cut = [dims[d] if d in keep else 1 for d in range(rank)]
            small = new(f"{shape(cut)} slice(p1), slice={{{ranges}}}")
            r = new(f"{shape([dims[d] for d in keep])} reshape({small})")
            kept = ",".join(map(str, keep))
            b = new(f"{s} broadcast({r}), dimensions={{{kept}}}")
            values.append(new(f"{s} add({x}, {b})"))
        elif kind == 3 and rank > 1:
            perm = draw(st.permutations(range(rank)))
            inv = [perm.index(d) for d in range(rank)]
            t = new(
                f"{shape([dims[p] for p in perm])} transpose({x}), dimensions={{{','.join(map(str, perm))}}}"
            )
            e = new(f"{shape([dims[p] for p in perm])} exponential({t})")
            values.append(new(f"{s} transpose({e}), dimensions={{{','.join(map(str, inv))}}}"))
        elif kind == 4:
            n = int(np.prod(dims))
            flat = new(f"f32[{n}] reshape({x})")
            neg = new(f"f32[{n}] negate({flat})")
            values.append(new(f"{s} reshape({neg})"))
        elif kind == 5:
            rev = new(f"{s} reverse({x}), dimensions={{{last}}}")
            values.append(new(f"{s} multiply({rev}, {y})"))
        elif kind == 6 and dims[last] > 1:
            # concatenate two slices back into the full shape, then pad
            k = draw(st.integers(1, dims[last] - 1))
            lo = [f"[0:{d}]" for d in dims]
            hi = list(lo)
            lo[last] = f"[0:{k}]"
            hi[last] = f"[{k}:{dims[last]}]"
            a = new(f"{shape([*dims[:last], k])} slice({x}), slice={{{', '.join(lo)}}}")
            b = new(
                f"{shape([*dims[:last], dims[last] - k])} slice({y}), slice={{{', '.join(hi)}}}"
            )
            c = new(f"{s} concatenate({b}, {a}), dimensions={{{last}}}")
            values.append(c)
        elif kind == 7:
            low, high = draw(st.integers(0, 2)), draw(st.integers(-1, 2))
            if dims[last] - 1 + high + low < 0:
                continue
            sh = list(dims)
            sh[last] = dims[last] + low + high
            if sh[last] < 1:
                continue
            z = new("f32[] constant(0.5)")
            cfg = "x".join(["0_0"] * last + [f"{low}_{high}"])
            p = new(f"{shape(sh)} pad({x}, {z}), padding={cfg}")
            cut = [f"[0:{d}]" for d in dims]
            if sh[last] >= dims[last]:
                values.append(new(f"{s} slice({p}), slice={{{', '.join(cut)}}}"))
        elif kind == 8:
            io = new(f"{s} iota(), iota_dimension={draw(st.integers(0, last))}")
            c = new(f"pred[{','.join(map(str, dims))}] compare({io}, {x}), direction=GT")
            values.append(new(f"{s} select({c}, {x}, {y})"))
        elif kind == 9:
            i = new(f"s32[{','.join(map(str, dims))}] convert({x})")
            values.append(new(f"{s} convert({i})"))
        elif kind == 10:
            # a reduction over the last dim broadcast back (softmax-like)
            red = draw(st.sampled_from(["add", "max"]))
            k = new(f"f32[] constant({'0' if red == 'add' else '-inf'})")
            r = new(f"{shape(dims[:last])} reduce({x}, {k}), dimensions={{{last}}}, to_apply={red}")
            b = new(f"{s} broadcast({r}), dimensions={{{','.join(map(str, range(last)))}}}")
            values.append(new(f"{s} subtract({y}, {b})"))
        elif kind == 11:
            # a reduction over other dims, as an extra output
            d = draw(st.integers(0, last))
            k = new("f32[] constant(0)")
            out = [dims[i] for i in range(rank) if i != d]
            r = new(f"{shape(out)} reduce({x}, {k}), dimensions={{{d}}}, to_apply=add")
            others = ",".join(str(i) for i in range(rank) if i != d)
            values.append(new(f"{s} broadcast({r}), dimensions={{{others}}}"))
    root = values[-1]
    return (
        f"""HloModule random
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}}
max {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] maximum(a, b)
}}
ENTRY main {{
  p0 = {s} parameter(0)
  p1 = {s} parameter(1)
"""
        + "\n".join(lines)
        + f"\n  ROOT out = {s} add({root}, p0)\n}}\n"
    )
