"""The uir.hlo Python surface: modules, computations, instructions, shapes,
attributes as Python values."""

from __future__ import annotations

import numpy as np
import pytest

import uir

TEXT = """HloModule demo, entry_computation_layout={(f32[2,3]{1,0}, f32[3,4]{1,0})->(f32[2,4]{1,0}, f32[2]{0})}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3] parameter(0)
  w = f32[3,4] parameter(1)
  d = f32[2,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot" source_line=7}
  z = f32[] constant(0)
  r = f32[2] reduce(d, z), dimensions={1}, to_apply=add
  s = f32[2,2] slice(d), slice={[0:2], [0:4:2]}
  p = f32[4,6] pad(d, z), padding=1_1x0_0_1
  c = pred[2,4] compare(d, d), direction=GT, type=TOTALORDER
  ROOT t = (f32[2,4], f32[2]) tuple(d, r)
}
"""


@pytest.fixture
def module():
    return uir.hlo.parse_module(TEXT)


def test_module_names_and_entry(module):
    assert module.name == "demo"
    assert module.entry.name == "main"
    assert [c.name for c in module.computations] == ["add", "main"]
    assert module.entry.is_entry and not module.computations[0].is_entry


def test_str_is_to_text(module):
    assert str(module) == module.to_text()
    assert module.to_text().startswith("HloModule demo, entry_computation_layout=")


def test_instructions_are_in_post_order_with_root_and_parameters(module):
    entry = module.entry
    names = [i.name for i in entry.instructions]
    for inst in entry.instructions:
        for op in inst.operands:
            assert names.index(op.name) < names.index(inst.name)
    assert entry.root.name == "t"
    assert [p.name for p in entry.parameters] == ["x", "w"]


def test_operands_users_and_opcode(module):
    d = next(i for i in module.entry.instructions if i.name == "d")
    assert d.opcode == "dot"
    assert [o.name for o in d.operands] == ["x", "w"]
    assert {u.name for u in d.users} == {"r", "s", "p", "c", "t"}


def test_attributes_are_python_values(module):
    by_name = {i.name: i for i in module.entry.instructions}
    d = by_name["d"].attributes
    assert d["lhs_contracting_dims"] == [1] and d["rhs_contracting_dims"] == [0]
    assert d["metadata"] == {"op_name": "jit(f)/dot", "source_line": 7}
    r = by_name["r"].attributes
    assert r["dimensions"] == [1]
    assert r["to_apply"].name == "add"
    assert by_name["s"].attributes["slice"] == [(0, 2, 1), (0, 4, 2)]
    assert by_name["p"].attributes["padding"] == [(1, 1, 0), (0, 0, 1)]
    assert by_name["c"].attributes["direction"] == "GT"
    assert by_name["x"].attributes == {"parameter_number": 0}
    literal = by_name["z"].attributes["literal"]
    assert isinstance(literal, np.ndarray) and literal.dtype == np.float32 and literal == 0


def test_called_computations(module):
    r = next(i for i in module.entry.instructions if i.name == "r")
    assert [c.name for c in r.called_computations] == ["add"]


def test_shapes(module):
    t = module.entry.root.shape
    assert t.is_tuple and t.dtype is None
    d, r = t.tuple_shapes
    assert r.dims == (2,)
    assert d.dtype == np.float32 and d.dims == (2, 4) and d.layout == (1, 0)
    assert str(d) == "f32[2,4]{1,0}"
    assert uir.hlo.Shape("bf16[2]").dtype == "bf16"
    assert uir.hlo.Shape("s32[<=4,?]").dynamic_dims == (True, True)
    assert uir.hlo.Shape("f32[2,3]{0,1}") != uir.hlo.Shape("f32[2,3]{1,0}")
    assert uir.hlo.Shape("f32[2,3]{0,1}").compatible(uir.hlo.Shape("f32[2,3]"))
    assert uir.hlo.Shape("f16[]{:T(256)}").layout_text == ":T(256)"


@pytest.mark.parametrize(
    "text",
    [
        "f32[10,20,30]{2,0,1}",
        "f32[1,2]{0,1:T(2,1)}",
        "f32[2,2]{0,1:S(1)}",
        "f32[8,128]{1,0:T(8,128)(2,1)L(4)#(s32)*(u64)E(4)S(3)SC(1:200)M(1024)}",
        "s32[<=4,?]{1,0}",
        "(f32[], (s32[2]{0}, pred[]))",
        "()",
        "token[]",
        "b(f32[2]{0})",
        "f8e4m3fn[3]{0}",
    ],
)
def test_shape_text_round_trips(text):
    assert str(uir.hlo.Shape(text)) == text


def test_bad_shape_text_is_a_parse_error():
    with pytest.raises(uir.ParseError):
        uir.hlo.Shape("f32[2")


def test_clone_is_equal_and_independent(module):
    copy = module.clone()
    assert copy == module
    assert copy is not module
    assert copy.entry.root.name == module.entry.root.name


def test_structural_equality_sees_changes(module):
    changed = uir.hlo.parse_module(TEXT.replace("direction=GT", "direction=LT"))
    assert changed != module
    renamed = uir.hlo.parse_module(TEXT.replace("HloModule demo", "HloModule other"))
    assert renamed != module


def test_views_keep_the_module_alive():
    entry = uir.hlo.parse_module(TEXT).entry  # the module is dropped here
    assert entry.root.operands[0].name == "d"


def test_load_reads_a_file(tmp_path):
    path = tmp_path / "m.hlo"
    path.write_text(TEXT)
    assert uir.hlo.load(path) == uir.hlo.parse_module(TEXT)


def test_print_options(module):
    assert "{1,0}" not in module.to_text(print_layout=False).split("\n", 2)[2]
    assert "f32[2,3]{1,0} %x" in module.to_text(print_operand_shapes=True)
    assert "metadata" not in module.to_text(print_metadata=False)


def test_headerless_module_is_named_after_its_entry():
    m = uir.hlo.parse_module("e {\n  ROOT p = f32[] parameter(0)\n}")
    assert m.name == "module_e" and m.entry.name == "e"


def test_nested_operands_and_omitted_shapes_parse():
    m = uir.hlo.parse_module(
        "ENTRY e {\n  ROOT r = f32[8,7] reshape(f32[1,8,1,7] parameter(0))\n}\n"
        "f {\n  a = f32[2] parameter(0)\n  ROOT b = add(a, a)\n}"
    )
    # f is not called by anything; it is kept.
    assert m.entry.name == "e"
    assert [i.opcode for i in m.entry.instructions] == ["parameter", "reshape"]
    f = m.computations[-1]
    assert str(f.root.shape) == "f32[2]{0}"


def test_sharding_is_typed():
    text = (
        "ENTRY e {\n"
        "  p = f32[4] parameter(0), sharding={devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}\n"
        "  q = f32[4] parameter(1), sharding={maximal device=1}\n"
        "  ROOT t = (f32[4], f32[4]) tuple(p, q), sharding={{replicated}, {devices=[2]0,1}}\n"
        "}"
    )
    m = uir.hlo.parse_module(text)
    p, q = m.entry.parameters
    assert p.attributes["sharding"] == {
        "kind": "tiled",
        "tile_dims": [2, 2],
        "iota_reshape_dims": [2, 2],
        "iota_transpose_perm": [1, 0],
        "last_tile_dim_replicate": True,
    }
    assert q.attributes["sharding"] == {"kind": "maximal", "device": 1}
    assert m.entry.root.attributes["sharding"] == [
        {"kind": "replicated"},
        {"kind": "tiled", "tile_dims": [2], "devices": [0, 1], "last_tile_dim_replicate": False},
    ]
    assert "sharding={{replicated}, {devices=[2]0,1}}" in m.to_text()


def test_unmodelled_sharding_forms_are_kept_as_written():
    text = "ENTRY e {\n  ROOT p = f32[4] parameter(0), sharding={devices=[2]0,1 shard_as 3}\n}"
    m = uir.hlo.parse_module(text)
    assert m.entry.root.attributes["sharding"] == "{devices=[2]0,1 shard_as 3}"
    assert uir.hlo.parse_module(m.to_text()) == m


def test_names_starting_with_a_digit_round_trip():
    # Found by the fuzzer: %7rg prints as "7rg:" in the signature.
    m = uir.hlo.parse_module("ENTRY %main {\n  ROOT %7rg_0.1 = f32[1] parameter(0)\n}")
    assert uir.hlo.parse_module(m.to_text()) == m
