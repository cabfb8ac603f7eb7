"""explain_fusion: priority-fusion's decisions with the numbers behind them."""

from __future__ import annotations

import dataclasses

from uir import _core


@dataclasses.dataclass(frozen=True)
class FusionDecision:
    """One producer: fused into its users, or why not.

    bytes_saved: memory traffic the fusion removes (the producer's output
    written and read back, less any inputs the fused users now read again);
    flops_duplicated: the producer's work repeated because it went into more
    than one user; seconds_unfused/seconds_fused: the cost model's time for
    the producer and its users as separate kernels and as fused ones."""

    computation: str
    producer: str
    producer_op: str
    consumers: tuple[str, ...]
    fused: bool
    into: str
    kind: str
    rule: str
    bytes_saved: float
    flops_duplicated: float
    seconds_unfused: float
    seconds_fused: float


class FusionReport:
    """What explain_fusion returns: the decisions (iterable, indexable), the
    fused module and the machine the cost model assumed. str() gives a table."""

    def __init__(self, decisions: list[FusionDecision], module, machine: dict):
        self.decisions = decisions
        self.module = module
        self.machine = machine

    def __iter__(self):
        return iter(self.decisions)

    def __len__(self) -> int:
        return len(self.decisions)

    def __getitem__(self, i: int) -> FusionDecision:
        return self.decisions[i]

    @property
    def fused(self) -> list[FusionDecision]:
        return [d for d in self.decisions if d.fused]

    @property
    def rejected(self) -> list[FusionDecision]:
        return [d for d in self.decisions if not d.fused]

    def __str__(self) -> str:
        rows = [f"machine: {self.machine['text']}"]
        head = (
            f"  {'producer':<18} {'op':<14} {'users':<22} {'bytes saved':>11} "
            f"{'flops dup':>10} {'us before':>9} {'us after':>9}  decision"
        )
        rows.append(head)
        for d in self.decisions:
            users = ",".join(d.consumers)
            users = users if len(users) <= 22 else users[:19] + "..."
            verdict = f"fused into {d.into} ({d.kind})" if d.fused else d.rule
            rows.append(
                f"{'+' if d.fused else '-'} {d.producer:<18} {d.producer_op:<14} {users:<22} "
                f"{d.bytes_saved:>11.0f} {d.flops_duplicated:>10.0f} "
                f"{d.seconds_unfused * 1e6:>9.2f} {d.seconds_fused * 1e6:>9.2f}  {verdict}"
            )
        return "\n".join(rows)

    def __repr__(self) -> str:
        return f"<FusionReport: {len(self.fused)} fused, {len(self.rejected)} not>"


def explain_fusion(module, *, simplify: bool = True, machine: str = "host") -> FusionReport:
    """Runs priority-fusion on a copy of `module` (after the default
    pipeline's simplification passes unless simplify=False) and reports every
    decision: each producer fused (into which fusion, of which kind) and each
    fusible producer left alone with the rule that stopped it, with the cost
    model's numbers. machine='reference' uses machine-limits.md's machine
    instead of this one, so the decisions do not depend on the host."""
    out = module.clone()
    if simplify:
        _core.passes.simplification_pipeline().run(out)
    raw = _core.passes.priority_fusion_decisions(out, machine)
    decisions = [
        FusionDecision(
            computation=d["computation"],
            producer=d["producer"],
            producer_op=d["producer_op"],
            consumers=tuple(d["consumers"]),
            fused=d["fused"],
            into=d["result"],
            kind=d["kind"],
            rule=d["rule"],
            bytes_saved=d["bytes_saved"],
            flops_duplicated=d["flops_duplicated"],
            seconds_unfused=d["seconds_unfused"],
            seconds_fused=d["seconds_fused"],
        )
        for d in raw
    ]
    return FusionReport(decisions, out, _core.passes.machine_model(machine))


def machine_model(name: str = "host") -> dict:
    """The machine the cost models assume: 'host' or 'reference'."""
    return dict(_core.passes.machine_model(name))
