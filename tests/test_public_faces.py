"""Public modules are thin faces: names re-exported from uir._src, no
implementation (no functions, classes or patched attributes)."""

import ast
import pathlib

import pytest

import uir
from uir._src.core.tracing import Tracer

ROOT = pathlib.Path(uir.__file__).resolve().parent
FACES = [
    "numpy/__init__.py",
    "lax/__init__.py",
    "nn/__init__.py",
    "tree_util.py",
    "image/__init__.py",
    "debug/__init__.py",
    "scipy/__init__.py",
    "scipy/special.py",
    "scipy/linalg.py",
    "scipy/signal.py",
    "scipy/stats/norm.py",
]


@pytest.mark.parametrize("face", FACES)
def test_face_holds_no_implementation(face):
    tree = ast.parse((ROOT / face).read_text())
    for node in tree.body:
        assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)), (
            f"{face}:{node.lineno} defines {node.name}"
        )
        if isinstance(node, ast.Assign):
            for target in node.targets:
                assert not isinstance(target, ast.Attribute), f"{face}:{node.lineno} patches"


def test_tracer_is_an_array_by_itself():
    # The operators come from uir._src.numpy.array_methods, not from uir.numpy.
    assert Tracer.__add__.__module__ == "uir._src.numpy.ufuncs"
    assert Tracer.__getitem__.__module__ == "uir._src.numpy.indexing"
    for name in ("__matmul__", "sum", "reshape", "astype", "T", "at"):
        assert hasattr(Tracer, name), name


def test_faces_export_the_implementations():
    from uir._src.core import tree_util
    from uir._src.nn import functions

    assert uir.nn.softmax is functions.softmax
    assert uir.tree_util.tree_map is tree_util.tree_map
    assert uir.numpy.result_type is uir._src.numpy.types.result_type
