"""What a compile writes under UIR_FLAGS=--dump_to=DIR besides the pass
dumps: each executable's LLVM IR before and after optimization and its
assembly, named as XLA names them."""

from __future__ import annotations


def write_code_dumps(exe) -> None:
    """The code dumps of a compiled executable, when --dump_to asks."""
    from uir._src.core.passes import flags, write_dump

    dump_to = flags().get("dump_to")
    if not isinstance(dump_to, str):
        return
    code = exe._text_exe()
    name = exe.module.name
    write_dump(dump_to, name, "ir-no-opt.ll", code.llvm_ir_unoptimized)
    write_dump(dump_to, name, "ir-with-opt.ll", code.llvm_ir)
    write_dump(dump_to, name, "s", code.assembly)
