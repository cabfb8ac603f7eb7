"""Building modules from Python: shapes are inferred, attributes are Python
values (or their text), and the result equals the same module parsed."""

from __future__ import annotations

import numpy as np
import pytest

import uir

EXPECTED = """HloModule built

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT add = f32[] add(x, y)
}

ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  dot = f32[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  constant = f32[] constant(0)
  reduce = f32[2] reduce(dot, constant), dimensions={1}, to_apply=add
  broadcast = f32[2,4] broadcast(reduce), dimensions={0}
  maximum = f32[2,4] maximum(dot, broadcast)
  slice = f32[2,2] slice(maximum), slice={[0:2], [0:4:2]}
  ROOT tuple = (f32[2,2], f32[2]) tuple(slice, reduce)
}
"""


def build() -> uir.hlo.HloModule:
    mb = uir.hlo.ModuleBuilder("built")
    add = mb.computation("add")
    x = add.parameter(0, "f32[]", name="x")
    y = add.parameter(1, uir.hlo.Shape("f32[]"), name="y")
    add_comp = add.build(add.op("add", x, y))

    main = mb.computation("main")
    a = main.parameter(0, "f32[2,3]", name="a")
    b = main.parameter(1, "f32[3,4]", name="b")
    dot = main.op("dot", a, b, lhs_contracting_dims=[1], rhs_contracting_dims=[0])
    zero = main.constant(np.float32(0))
    red = main.op("reduce", dot, zero, dimensions=[1], to_apply=add_comp)
    bc = main.broadcast(red, [2, 4], [0])
    mx = main.op("maximum", dot, bc)
    sl = main.op("slice", mx, slice=[(0, 2), (0, 4, 2)])
    root = main.op("tuple", sl, red)
    return mb.build(main.build(root))


def test_built_module_equals_the_parsed_one():
    built = build()
    assert built == uir.hlo.parse_module(EXPECTED)
    assert uir.hlo.parse_module(built.to_text()) == built


def test_inferred_shapes():
    m = build()
    shapes = {i.name: str(i.shape) for i in m.entry.instructions}
    assert shapes["dot"] == "f32[2,4]{1,0}"
    assert shapes["reduce"] == "f32[2]{0}"
    assert shapes["slice"] == "f32[2,2]{1,0}"


def test_attributes_may_be_given_as_text():
    mb = uir.hlo.ModuleBuilder("m")
    add = mb.computation("add")
    add_comp = add.build(add.op("add", add.parameter(0, "f32[]"), add.parameter(1, "f32[]")))
    c = mb.computation("main")
    p = c.parameter(0, "f32[8]")
    z = c.constant(np.float32(0))
    r = c.op("reduce-window", p, z, window="{size=2 stride=2}", to_apply=add_comp)
    assert str(r.shape) == "f32[4]{0}"
    assert r.attributes["window"][0]["stride"] == 2


def test_shape_errors_name_the_op_and_shapes():
    c = uir.hlo.ModuleBuilder("m").computation("main")
    a = c.parameter(0, "f32[2]")
    b = c.parameter(1, "f32[3]")
    with pytest.raises(uir.ShapeError, match=r"add\(f32\[2\], f32\[3\]\)"):
        c.op("add", a, b)
    with pytest.raises(uir.ShapeError, match="changes the element count"):
        c.reshape(a, [3])
    with pytest.raises(uir.ShapeError, match="needs an explicit shape"):
        c.op("iota")


def test_unknown_opcode_and_attribute_are_errors():
    c = uir.hlo.ModuleBuilder("m").computation("main")
    a = c.parameter(0, "f32[2]")
    with pytest.raises(ValueError, match="unknown opcode 'frobnicate'"):
        c.op("frobnicate", a)
    with pytest.raises(TypeError, match="unknown HLO attribute 'colour'"):
        c.op("negate", a, colour="red")


def test_operands_from_another_computation_are_refused():
    mb = uir.hlo.ModuleBuilder("m")
    c1 = mb.computation("one")
    c2 = mb.computation("two")
    a = c1.parameter(0, "f32[]")
    with pytest.raises(ValueError, match="belongs to another computation"):
        c2.op("negate", a)


def test_constants_of_many_dtypes():
    import ml_dtypes

    c = uir.hlo.ModuleBuilder("m").computation("main")
    for value, text in [
        (np.array([1, 2], np.int8), "s8[2]{0}"),
        (np.array(True), "pred[]"),
        (np.array([1.5], ml_dtypes.bfloat16), "bf16[1]{0}"),
        (np.array([[1 + 2j]], np.complex64), "c64[1,1]{1,0}"),
        (3, "s64[]"),
    ]:
        inst = c.constant(value)
        assert str(inst.shape) == text
        np.testing.assert_array_equal(
            inst.attributes["literal"], np.asarray(value).astype(inst.attributes["literal"].dtype)
        )
