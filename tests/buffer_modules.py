"""Random HLO modules for scheduling and buffer assignment: [4,3] values
through elementwise ops, in-place updates, tuples, while loops (with
in-place updates of their state), conditionals (whose branches return a
parameter, a constant or a new value), copy-start/copy-done and generic
async-start/async-done wrapping a computation."""

from __future__ import annotations

from hypothesis import strategies as st

# exp(p) is live across a wide broadcast: under a memory limit,
# rematerialization recomputes it after the broadcast instead of keeping it.
HELD_ACROSS_BROADCAST = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[256,256] parameter(0)
  q = f32[256] parameter(1)
  z = f32[] constant(0)
  x = f32[256,256] exponential(p)
  sa = f32[256] reduce(x, z), dimensions={1}, to_apply=add
  big = f32[256,256,2] broadcast(q), dimensions={0}
  r = f32[256,256] reduce(big, z), dimensions={2}, to_apply=add
  y = f32[256,256] add(x, r)
  sb = f32[256] reduce(y, z), dimensions={1}, to_apply=add
  ROOT out = f32[256] add(sa, sb)
}
"""

S = "f32[4,3]"
UNARY = ["negate", "abs", "exponential", "sqrt", "tanh"]
BINARY = ["add", "subtract", "multiply", "maximum"]


@st.composite
def modules(draw) -> str:
    lines: list[str] = []
    comps: list[str] = []
    values = ["p0", "p1"]
    counter = iter(range(100_000))

    def new(text: str) -> str:
        name = f"v{next(counter)}"
        lines.append(f"  {name} = {text}")
        return name

    def pick() -> str:
        return draw(st.sampled_from(values))

    for _ in range(draw(st.integers(2, 12))):
        kind = draw(st.integers(0, 9))
        x, y = pick(), pick()
        if kind == 0:
            values.append(new(f"{S} {draw(st.sampled_from(UNARY))}({x})"))
        elif kind == 1:
            values.append(new(f"{S} {draw(st.sampled_from(BINARY))}({x}, {y})"))
        elif kind == 2:
            row = new(f"f32[1,3] slice({y}), slice={{[0:1], [0:3]}}")
            i0 = new(f"s32[] constant({draw(st.integers(0, 3))})")
            i1 = new("s32[] constant(0)")
            values.append(new(f"{S} dynamic-update-slice({x}, {row}, {i0}, {i1})"))
        elif kind == 3:
            t = new(f"({S}, ({S}, {S})) tuple({x}, {new(f'({S}, {S}) tuple({y}, {x})')})")
            inner = new(f"({S}, {S}) get-tuple-element({t}), index=1")
            values.append(new(f"{S} get-tuple-element({inner}), index={draw(st.integers(0, 1))}"))
        elif kind == 4:
            n = len(comps)
            trips = draw(st.integers(0, 3))
            st_ = f"(s32[], {S}, {S})"
            comps.append(f"""cond{n} {{
  p = {st_} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant({trips})
  ROOT lt = pred[] compare(i, k), direction=LT
}}
body{n} {{
  p = {st_} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = {S} get-tuple-element(p), index=1
  b = {S} get-tuple-element(p), index=2
  r = f32[1,3] slice(b), slice={{[1:2], [0:3]}}
  zero = s32[] constant(0)
  j = s32[] constant({draw(st.integers(0, 3))})
  a1 = {S} dynamic-update-slice(a, r, j, zero)
  b1 = {S} {draw(st.sampled_from(BINARY))}(a, b)
  ROOT t = {st_} tuple(i1, a1, b1)
}}
""")
            zero = new("s32[] constant(0)")
            init = new(f"{st_} tuple({zero}, {x}, {y})")
            w = new(f"{st_} while({init}), condition=cond{n}, body=body{n}")
            values.append(new(f"{S} get-tuple-element({w}), index={draw(st.integers(1, 2))}"))
        elif kind == 5:
            n = len(comps)
            bodies = [
                "  ROOT r = {S} get-tuple-element(p), index=0",
                "  ROOT r = {S} constant({{{{1,2,3}},{{4,5,6}},{{7,8,9}},{{0,1,2}}}})",
                "  a = {S} get-tuple-element(p), index=0\n  b = {S} get-tuple-element(p), index=1\n"
                "  ROOT r = {S} multiply(a, b)",
            ]
            b0 = draw(st.sampled_from(bodies)).format(S=S)
            b1 = draw(st.sampled_from(bodies)).format(S=S)
            comps.append(f"""then{n} {{
  p = ({S}, {S}) parameter(0)
{b0}
}}
else{n} {{
  p = ({S}, {S}) parameter(0)
{b1}
}}
""")
            pred = new(f"pred[] constant({draw(st.sampled_from(['true', 'false']))})")
            arg = new(f"({S}, {S}) tuple({x}, {y})")
            values.append(
                new(
                    f"{S} conditional({pred}, {arg}, {arg}), "
                    f"true_computation=then{n}, false_computation=else{n}"
                )
            )
        elif kind == 6:
            s = new(f"({S}, {S}, u32[]) copy-start({x})")
            values.append(new(f"{S} copy-done({s})"))
        elif kind == 7:
            n = len(comps)
            op = draw(st.sampled_from(UNARY))
            comps.append(f"""wrapped{n} {{
  a = {S} parameter(0)
  b = {S} parameter(1)
  c = {S} {op}(a)
  ROOT d = {S} add(c, b)
}}
""")
            s = new(f"(({S}, {S}), {S}, s32[]) async-start({x}, {y}), calls=wrapped{n}")
            # independent work between start and done
            values.append(new(f"{S} negate({pick()})"))
            values.append(new(f"{S} async-done({s})"))
        elif kind == 8:
            values.append(new(f"{S} add({x}, {new(f'{S} multiply({y}, {y})')})"))
        else:
            new(f"{S} abs({x})")  # dead
    outs = sorted({values[-1], draw(st.sampled_from(values))}, key=values.index)
    lines.append(f"  ROOT out = ({', '.join([S] * len(outs))}) tuple({', '.join(outs)})")
    return (
        "HloModule random\n"
        + "".join(comps)
        + f"ENTRY main {{\n  p0 = {S} parameter(0)\n  p1 = {S} parameter(1)\n"
        + "\n".join(lines)
        + "\n}\n"
    )
