"""Property tests: every pass, on random modules built to hit its rules,
keeps the evaluator's results. Integer modules compare exactly; float ones
within 1e-5 relative (algsimp turns a sum of a broadcast into a multiply,
which rounds differently)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import uir

UNARY = ["negate", "abs", "exponential", "not"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum"]


def _identity(reducer: str, t: str) -> str:
    """The init value of an `add` or `max` reduction over type t."""
    return "0" if reducer == "add" else ("-inf" if t == "f32" else "-2147483648")


@st.composite
def modules(draw, dtype: str = "f32"):
    """A random entry over p0, p1: [4,3] arrays, built from ops that the
    passes rewrite (identities with 0 and 1, double negation, shape no-ops
    and chains, reductions of broadcasts, dots without contraction, tuples,
    calls, maps, duplicates, dead code, constant-only subgraphs, row and column
    reductions broadcast back, as fusion meets them, counted loops with dead
    state)."""
    lines: list[str] = []
    values: list[str] = []  # names of [4,3] values
    counter = iter(range(10_000))

    def new(text: str) -> str:
        name = f"v{next(counter)}"
        lines.append(f"  {name} = {text}")
        return name

    t = dtype
    s = f"{t}[4,3]"
    values += ["p0", "p1"]
    loops: list[str] = []
    for _ in range(draw(st.integers(2, 9))):
        kind = draw(st.sampled_from(range(21)))
        x = draw(st.sampled_from(values))
        y = draw(st.sampled_from(values))
        if kind == 0:
            op = draw(
                st.sampled_from(
                    [u for u in UNARY if u != "not" and (u != "exponential" or t == "f32")]
                )
            )
            values.append(new(f"{s} {op}({x})"))
        elif kind == 1:
            values.append(new(f"{s} {draw(st.sampled_from(BINARY))}({x}, {y})"))
        elif kind == 2:
            c = draw(st.sampled_from([0, 1, 2]))
            k = new(f"{t}[] constant({c})")
            b = new(f"{s} broadcast({k}), dimensions={{}}")
            op = draw(st.sampled_from(["add", "multiply", "subtract"]))
            values.append(
                new(f"{s} {op}({x}, {b})" if draw(st.booleans()) else f"{s} {op}({b}, {x})")
            )
        elif kind == 3:
            n = new(f"{s} negate({x})")
            values.append(new(f"{s} negate({n})"))
        elif kind == 4:
            tr = new(f"{t}[3,4] transpose({x}), dimensions={{1,0}}")
            values.append(new(f"{s} transpose({tr}), dimensions={{1,0}}"))
        elif kind == 5:
            r = new(f"{t}[12] reshape({x})")
            r2 = new(f"{t}[2,6] reshape({r})")
            values.append(new(f"{s} reshape({r2})"))
        elif kind == 6:
            # slice of a slice, reshaped and broadcast back to [4,3]
            sl = new(f"{t}[4,2] slice({x}), slice={{[0:4], [1:3]}}")
            sl2 = new(f"{t}[2,1] slice({sl}), slice={{[0:4:2], [1:2]}}")
            r = new(f"{t}[2] reshape({sl2})")
            b = new(f"{t}[2,4,3] broadcast({r}), dimensions={{0}}")
            one = new(f"{t}[1,4,3] slice({b}), slice={{[1:2], [0:4], [0:3]}}")
            values.append(new(f"{s} reshape({one})"))
        elif kind == 7:
            reducer = draw(st.sampled_from(["add", "max"]))
            init = _identity(reducer, t)
            r = new(
                f"{t}[4] reduce({x}, {new(f'{t}[] constant(0)')}), dimensions={{1}}, to_apply=add"
            )
            b = new(f"{t}[4,3,5] broadcast({r}), dimensions={{0}}")
            k = new(f"{t}[] constant({init})")
            values.append(new(f"{s} reduce({b}, {k}), dimensions={{2}}, to_apply={reducer}"))
        elif kind == 8:
            a = new(f"{t}[4,1] slice({x}), slice={{[0:4], [0:1]}}")
            c = new(f"{t}[1,3] slice({y}), slice={{[0:1], [0:3]}}")
            values.append(
                new(f"{s} dot({a}, {c}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
            )
        elif kind == 9:
            tup = new(f"({s}, {s}) tuple({x}, {y})")
            values.append(new(f"{s} get-tuple-element({tup}), index={draw(st.integers(0, 1))}"))
        elif kind == 10:
            values.append(new(f"{s} call({x}, {y}), to_apply=callee"))
        elif kind == 11:
            c = new(f"{s} constant({{{{1,2,3}},{{4,5,6}},{{7,8,9}},{{1,0,2}}}})")
            c2 = new(f"{s} negate({c})")
            values.append(new(f"{s} add({x}, {c2})"))
        elif kind == 12:
            # a row reduction broadcast back along its rows (softmax-like)
            reducer = draw(st.sampled_from(["add", "max"]))
            init = _identity(reducer, t)
            k = new(f"{t}[] constant({init})")
            r = new(f"{t}[4] reduce({x}, {k}), dimensions={{1}}, to_apply={reducer}")
            b = new(f"{s} broadcast({r}), dimensions={{0}}")
            values.append(new(f"{s} {draw(st.sampled_from(BINARY))}({y}, {b})"))
        elif kind == 13:
            # a column reduction broadcast back (not a row)
            k = new(f"{t}[] constant(0)")
            r = new(f"{t}[3] reduce({x}, {k}), dimensions={{0}}, to_apply=add")
            b = new(f"{s} broadcast({r}), dimensions={{1}}")
            values.append(new(f"{s} subtract({y}, {b})"))
        elif kind == 14:
            # a row result reshaped to [4,1], worked on, and broadcast back
            k = new(f"{t}[] constant(0)")
            r = new(f"{t}[4] reduce({x}, {k}), dimensions={{1}}, to_apply=add")
            r1 = new(f"{t}[4,1] reshape({r})")
            n = new(f"{t}[4,1] negate({r1})")
            b = new(f"{s} broadcast({n}), dimensions={{0,1}}")
            values.append(new(f"{s} add({x}, {b})"))
        elif kind == 15:
            # a counted loop (0 to 3 trips) with one state element nobody reads
            trips = draw(st.integers(0, 3))
            w = f"loop{len(loops)}"
            st_ = f"(s32[], {s}, {s}, {s})"
            op = draw(st.sampled_from(BINARY))
            loops.append(f"""{w}_cond {{
  p = {st_} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({trips})
  ROOT lt = pred[] compare(i, n), direction=LT
}}
{w}_body {{
  p = {st_} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = {s} get-tuple-element(p), index=1
  y = {s} get-tuple-element(p), index=2
  z = {s} get-tuple-element(p), index=3
  x1 = {s} {op}(x, y)
  y1 = {s} negate(y)
  z1 = {s} abs(z)
  ROOT t = {st_} tuple(i1, x1, y1, z1)
}}
""")
            zero = new("s32[] constant(0)")
            init = new(f"{st_} tuple({zero}, {x}, {y}, {x})")
            loop = new(f"{st_} while({init}), condition={w}_cond, body={w}_body")
            values.append(new(f"{s} get-tuple-element({loop}), index=1"))
        elif kind == 16:
            # an in-place update of a value that may be read again later
            row = new(f"{t}[1,3] slice({y}), slice={{[0:1], [0:3]}}")
            i0 = new(f"s32[] constant({draw(st.integers(0, 3))})")
            i1 = new("s32[] constant(0)")
            values.append(new(f"{s} dynamic-update-slice({x}, {row}, {i0}, {i1})"))
        elif kind == 17:
            # a dot chain: x . yT, a row-local epilogue, then . y
            yt = new(f"{t}[3,4] transpose({y}), dimensions={{1,0}}")
            h = new(
                f"{t}[4,4] dot({x}, {yt}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}"
            )
            k = new(f"{t}[] constant(0)")
            r = new(f"{t}[4] reduce({h}, {k}), dimensions={{1}}, to_apply=max")
            b = new(f"{t}[4,4] broadcast({r}), dimensions={{0}}")
            e = new(f"{t}[4,4] subtract({h}, {b})")
            values.append(
                new(f"{s} dot({e}, {y}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}")
            )
        elif kind == 18:
            # a map of a scalar computation (add, max, or arithmetic with a constant)
            f = draw(st.sampled_from(["add", "max", "mapper"]))
            values.append(new(f"{s} map({x}, {y}), dimensions={{0,1}}, to_apply={f}"))
        elif kind == 19:
            # a reduction by a computation of its own, over rows, columns or
            # both, broadcast back
            axes = draw(st.sampled_from([[0], [1], [0, 1]]))
            kept = [n for d, n in enumerate((4, 3)) if d not in axes]
            k = new(f"{t}[] constant(0)")
            dims = ",".join(map(str, axes))
            r = new(
                f"{t}[{','.join(map(str, kept))}] reduce({x}, {k}), "
                f"dimensions={{{dims}}}, to_apply=absmax"
            )
            along = "" if len(kept) == 0 else ("1" if axes == [0] else "0")
            values.append(new(f"{s} broadcast({r}), dimensions={{{along}}}"))
        else:
            new(f"{s} abs({x})")  # dead
    root = values[-1]
    extra = draw(st.sampled_from(values))
    lines.append(f"  ROOT out = ({s}, {s}) tuple({root}, {extra})")
    head = f"""HloModule random
add {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] add(a, b)
}}
max {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  ROOT r = {t}[] maximum(a, b)
}}
absmax {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  aa = {t}[] abs(a)
  ab = {t}[] abs(b)
  ROOT r = {t}[] maximum(aa, ab)
}}
mapper {{
  a = {t}[] parameter(0)
  b = {t}[] parameter(1)
  k = {t}[] constant(2)
  m = {t}[] multiply(a, k)
  ROOT r = {t}[] subtract(m, b)
}}
callee {{
  a = {s} parameter(0)
  b = {s} parameter(1)
  n = {s} negate(a)
  ROOT r = {s} add(n, b)
}}
ENTRY main {{
  p0 = {s} parameter(0)
  p1 = {s} parameter(1)
"""
    return head.replace("ENTRY main", "".join(loops) + "ENTRY main") + "\n".join(lines) + "\n}\n"


def inputs(dtype: str, seed: int):
    rng = np.random.default_rng(seed)
    if dtype == "f32":
        return [rng.standard_normal((4, 3)).astype(np.float32) for _ in range(2)]
    return [rng.integers(-50, 50, (4, 3)).astype(np.int32) for _ in range(2)]


def check(text: str, dtype: str, pass_name: str) -> None:
    module = uir.hlo.parse_module(text)
    args = inputs(dtype, 0)
    want = uir.evaluate(module, *args)
    out = uir.passes.run(module, [*PREREQUISITES.get(pass_name, []), pass_name])
    out.verify()
    got = uir.evaluate(out, *args)
    for w, g in zip(want, got, strict=True):
        if dtype == "f32":
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, w)


PASSES = [
    "algsimp",
    "batchnorm_expander",  # random modules hold none: tests/passes/test_batchnorm_expander.py
    "constant-folding",
    "cse",
    "dce",
    "tuple-simplifier",
    "call-inliner",
    "map-inliner",
    "reduce-expander",
    "scatter-expander",  # random modules hold none: tests/passes/test_scatter_expander.py
    "priority-fusion",
    "multi-output-fusion",
    "dot-chain-fusion",
    "library-defuser",
    "while-loop-simplifier",
    "layout-assignment",
    "layout-normalization",
    "copy-insertion",
    "flatten-call-graph",
    "memory-scheduler",
    "latency-hiding-scheduler",
]
# Passes that work on what another pass leaves (a schedule).
PREREQUISITES = {
    "latency-hiding-scheduler": ["memory-scheduler"],
    "library-defuser": ["dot-chain-fusion", "priority-fusion"],
}


@pytest.mark.parametrize("pass_name", PASSES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_pass_keeps_results_on_random_modules(pass_name, data):
    dtype = data.draw(st.sampled_from(["f32", "s32"]))
    text = data.draw(modules(dtype))
    check(text, dtype, pass_name)
    if pass_name == "copy-insertion":
        assert_no_clobbered_values(uir.passes.run(uir.hlo.parse_module(text), [pass_name]))


def _ancestors(inst) -> set[int]:
    seen: set[int] = set()
    work = list(inst.operands) + list(inst.control_predecessors)
    while work:
        i = work.pop()
        if i.unique_id not in seen:
            seen.add(i.unique_id)
            work += list(i.operands) + list(i.control_predecessors)
    return seen


def _readers(value, root) -> list:
    """What reads `value`: its users, where a tuple holding it counts through
    the get-tuple-elements that take that element out (as copy-insertion
    follows values); the root tuple and any other user of a tuple (a loop, a
    call) count as readers themselves."""
    out = []
    for u in value.users:
        if u.opcode != "tuple" or u.unique_id == root.unique_id:
            out.append(u)
            continue
        held = {i for i, o in enumerate(u.operands) if o.unique_id == value.unique_id}
        for g in u.users:
            if g.opcode != "get-tuple-element":
                out.append(g)
            elif g.attributes["index"] in held:
                out += _readers(g, root) if g.unique_id != root.unique_id else [g]
    return out


def assert_no_clobbered_values(module) -> None:
    """Every dynamic-update-slice writes a buffer nothing reads afterwards:
    not an entry parameter or constant, not an output, and every other
    reader of it ordered before the update."""
    root = module.entry.root
    for c in module.computations:
        for inst in c.instructions:
            if inst.opcode != "dynamic-update-slice":
                continue
            buf = inst.operands[0]
            while buf.opcode == "bitcast":
                buf = buf.operands[0]
            assert buf.opcode not in ("parameter", "constant"), inst.to_text()
            before = _ancestors(inst)
            for r in _readers(buf, root):
                if r.unique_id == inst.unique_id:
                    continue
                assert r.unique_id != root.unique_id, f"{buf.name} is also an output"
                assert r.unique_id in before, f"{r.name} may read {buf.name} after {inst.name}"


def test_every_pass_has_a_property_test():
    assert set(PASSES) == set(uir.passes.available())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fusion_passes_in_sequence_keep_results(data):
    # multi-output-fusion meets the fusions priority-fusion made
    dtype = data.draw(st.sampled_from(["f32", "s32"]))
    text = data.draw(modules(dtype))
    module = uir.hlo.parse_module(text)
    args = inputs(dtype, 0)
    want = uir.evaluate(module, *args)
    out = uir.passes.run(module, ["priority-fusion", "multi-output-fusion", "cse"])
    got = uir.evaluate(out, *args)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_layout_passes_keep_results_with_random_layouts(data):
    dtype = data.draw(st.sampled_from(["f32", "s32"]))
    text = data.draw(modules(dtype))
    s = f"{dtype}[4,3]"
    lay = [data.draw(st.sampled_from(["{1,0}", "{0,1}"])) for _ in range(4)]
    text = text.replace(f"p0 = {s} parameter(0)", f"p0 = {s}{lay[0]} parameter(0)", 1)
    text = text.replace(f"p1 = {s} parameter(1)", f"p1 = {s}{lay[1]} parameter(1)", 1)
    header = (
        f"HloModule random, entry_computation_layout={{({s}{lay[0]}, {s}{lay[1]})"
        f"->({s}{lay[2]}, {s}{lay[3]})}}"
    )
    module = uir.hlo.parse_module(text.replace("HloModule random", header, 1))
    args = inputs(dtype, 0)
    want = uir.evaluate(module, *args)
    assigned = uir.passes.run(module, ["layout-assignment"])
    assert uir._core.passes.layout_problems(assigned) == []
    out = uir.passes.run(assigned, ["layout-normalization", "algsimp", "dce"])
    keep = {"parameter", "bitcast", "tuple", "get-tuple-element", "dot", "call", "constant"}
    for i in out.entry.instructions:
        if i.opcode not in keep and i.shape.rank == 2:
            assert list(i.shape.layout) == [1, 0], i.to_text()
    got = uir.evaluate(out, *args)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
