"""HLO modules of n participants, one per collective form: every
reduction kind over each dtype family, the gathers, scatters, all-to-alls,
permutes and broadcasts, their async starts, with replica groups and with
channel ids over partitions. Each participant's operands differ (its id is
added in), so every collective meets different values. Shared by the
in-process tests and the ranks under mpirun."""

from __future__ import annotations

REDUCE_OPS = {
    "add": "add",
    "mul": "multiply",
    "max": "maximum",
    "min": "minimum",
    "and": "and",
    "or": "or",
}


def reducer(name: str, t: str) -> str:
    """A scalar computation `name_t` folding two `t`s by REDUCE_OPS[name]."""
    return (
        f"{name}_{t} {{ a = {t}[] parameter(0)  b = {t}[] parameter(1)  "
        f"ROOT r = {t}[] {REDUCE_OPS[name]}(a, b) }}\n"
    )


def _own(t: str, dims: str, id_op: str = "replica-id") -> str:
    """y = x + this participant's id."""
    if t == "pred":
        return (
            f"  i = u32[] {id_op}()\n  two = u32[] constant(2)\n  m = u32[] remainder(i, two)\n"
            f"  zero = u32[] constant(0)\n  c = pred[] compare(m, zero), direction=EQ\n"
            f"  b = pred{dims} broadcast(c), dimensions={{}}\n  y = pred{dims} xor(x, b)\n"
        )
    return (
        f"  i = u32[] {id_op}()\n  c = {t}[] convert(i)\n"
        f"  b = {t}{dims} broadcast(c), dimensions={{}}\n  y = {t}{dims} add(x, b)\n"
    )


def _module(name: str, n: int, body: str, reducers=(), partitions: int = 1) -> tuple[str, str]:
    replicas = n // partitions
    head = f"HloModule {name}, replica_count={replicas}"
    if partitions > 1:
        head += f", num_partitions={partitions}"
    return name, head + "\n" + "".join(reducer(r, t) for r, t in reducers) + body


def _groups(n: int) -> str:
    """Two groups of half the participants, interleaved."""
    if n < 4:
        return "{{0},{1}}" if n == 2 else "{}"
    return (
        "{" + ",".join("{" + ",".join(str(i) for i in range(k, n, 2)) + "}" for k in (1, 0)) + "}"
    )


def cases(n: int) -> list[tuple[str, str]]:
    out = []
    families = {
        "add": ["f32", "f64", "bf16", "f16", "s32", "u8", "s64", "c64"],
        "mul": ["f32", "f64", "bf16", "s32", "u16", "c64"],
        "max": ["f32", "f64", "f16", "s8", "u32"],
        "min": ["f32", "bf16", "s16", "u64"],
        "and": ["pred", "s32", "u8"],
        "or": ["pred", "s64", "u16"],
    }
    for red, types in families.items():
        for t in types:
            out.append(
                _module(
                    f"all_reduce_{red}_{t}",
                    n,
                    f"ENTRY e {{\n  x = {t}[5,3] parameter(0)\n"
                    + _own(t, "[5,3]")
                    + f"  ROOT s = {t}[5,3] all-reduce(y), replica_groups={{}}, to_apply={red}_{t}\n}}\n",
                    [(red, t)],
                )
            )
    g = _groups(n)
    out.append(
        _module(
            "all_reduce_groups",
            n,
            "ENTRY e {\n  x = f32[6] parameter(0)\n"
            + _own("f32", "[6]")
            + f"  ROOT s = f32[6] all-reduce(y), replica_groups={g}, to_apply=add_f32\n}}\n",
            [("add", "f32")],
        )
    )
    out.append(
        _module(
            "all_reduce_variadic",
            n,
            "ENTRY e {\n  x = f32[6] parameter(0)\n  z = s32[4] parameter(1)\n"
            + _own("f32", "[6]")
            + "  ROOT s = (f32[6], s32[4]) all-reduce(y, z), replica_groups={}, to_apply=add_f32\n}\n",
            [("add", "f32")],
        )
    )
    for dim, (src, dst) in enumerate([("[3,4]", f"[{3 * n},4]"), ("[3,4]", f"[3,{4 * n}]")]):
        out.append(
            _module(
                f"all_gather_{dim}",
                n,
                f"ENTRY e {{\n  x = f32{src} parameter(0)\n"
                + _own("f32", src)
                + f"  ROOT g = f32{dst} all-gather(y), dimensions={{{dim}}}, replica_groups={{}}\n}}\n",
            )
        )
    out.append(
        _module(
            "reduce_scatter_1",
            n,
            f"ENTRY e {{\n  x = f32[3,{2 * n}] parameter(0)\n"
            + _own("f32", f"[3,{2 * n}]")
            + "  ROOT r = f32[3,2] reduce-scatter(y), dimensions={1}, replica_groups={}, "
            "to_apply=add_f32\n}\n",
            [("add", "f32")],
        )
    )
    out.append(
        _module(
            "reduce_scatter_max_bf16",
            n,
            f"ENTRY e {{\n  x = bf16[{3 * n},2] parameter(0)\n"
            + _own("bf16", f"[{3 * n},2]")
            + "  ROOT r = bf16[3,2] reduce-scatter(y), dimensions={0}, replica_groups={}, "
            "to_apply=max_bf16\n}\n",
            [("max", "bf16")],
        )
    )
    for dim in (0, 1):
        out.append(
            _module(
                f"all_to_all_{dim}",
                n,
                f"ENTRY e {{\n  x = s32[{2 * n},{n}] parameter(0)\n"
                + _own("s32", f"[{2 * n},{n}]")
                + f"  ROOT a = s32[{2 * n},{n}] all-to-all(y), dimensions={{{dim}}}, "
                "replica_groups={}\n}\n",
            )
        )
    ring = ",".join(f"{{{i},{(i + 1) % n}}}" for i in range(n))
    out.append(
        _module(
            "permute_ring",
            n,
            "ENTRY e {\n  x = f32[7] parameter(0)\n"
            + _own("f32", "[7]")
            + f"  ROOT p = f32[7] collective-permute(y), source_target_pairs={{{ring}}}\n}}\n",
        )
    )
    out.append(
        _module(
            "permute_partial",
            n,
            "ENTRY e {\n  x = f32[7] parameter(0)\n"
            + _own("f32", "[7]")
            + "  ROOT p = f32[7] collective-permute(y), source_target_pairs={{0,1}}\n}\n",
        )
    )
    out.append(
        _module(
            "broadcast",
            n,
            "ENTRY e {\n  x = f32[4] parameter(0)\n"
            + _own("f32", "[4]")
            + f"  ROOT bc = f32[4] collective-broadcast(y), replica_groups={g}\n}}\n",
        )
    )
    out.append(
        _module(
            "async_starts",
            n,
            "ENTRY e {\n  x = f32[64] parameter(0)\n"
            + _own("f32", "[64]")
            + "  ars = f32[64] all-reduce-start(y), replica_groups={}, to_apply=add_f32\n"
            f"  ags = (f32[64], f32[{64 * n}]) all-gather-start(y), dimensions={{0}}, "
            "replica_groups={}\n"
            "  cps = (f32[64], f32[64], u32[], u32[]) collective-permute-start(y), "
            f"source_target_pairs={{{ring}}}\n"
            "  t = f32[64] tanh(y)\n"
            "  ard = f32[64] all-reduce-done(ars)\n"
            f"  agd = f32[{64 * n}] all-gather-done(ags)\n"
            "  cpd = f32[64] collective-permute-done(cps)\n"
            f"  ROOT out = (f32[64], f32[{64 * n}], f32[64], f32[64]) tuple(ard, agd, cpd, t)\n}}\n",
            [("add", "f32")],
        )
    )
    out.append(
        _module(
            "async_start_wrapping",
            n,
            f"wrapped {{\n  p = f32[4,{2 * n}] parameter(0)\n  ROOT a = f32[4,2] reduce-scatter(p), "
            "dimensions={1}, replica_groups={}, to_apply=add_f32\n}\n"
            f"ENTRY e {{\n  x = f32[4,{2 * n}] parameter(0)\n"
            + _own("f32", f"[4,{2 * n}]")
            + f"  s = ((f32[4,{2 * n}]), f32[4,2], s32[]) async-start(y), calls=wrapped\n"
            "  ROOT d = f32[4,2] async-done(s)\n}\n",
            [("add", "f32")],
        )
    )
    # Channel ids over partitions: global device ids, and partitions of a replica.
    everyone = "{{" + ",".join(str(i) for i in range(n)) + "}}"
    out.append(
        _module(
            "channel_global_ids",
            n,
            "ENTRY e {\n  x = f32[6] parameter(0)\n"
            + _own("f32", "[6]", "partition-id")
            + f"  ROOT s = f32[6] all-reduce(y), channel_id=1, replica_groups={everyone}, "
            "use_global_device_ids=true, to_apply=add_f32\n}\n",
            [("add", "f32")],
            partitions=n,
        )
    )
    if n >= 4:
        out.append(
            _module(
                "channel_partitions_of_a_replica",
                n,
                "ENTRY e {\n  x = f32[6] parameter(0)\n"
                + _own("f32", "[6]", "partition-id")
                + "  r = f32[6] all-reduce(y), channel_id=1, replica_groups={{0,1}}, to_apply=add_f32\n"
                "  g = f32[12] all-gather(y), channel_id=2, dimensions={0}, replica_groups={{1,0}}\n"
                "  ROOT t = (f32[6], f32[12]) tuple(r, g)\n}\n",
                [("add", "f32")],
                partitions=2,
            )
        )
    return out
