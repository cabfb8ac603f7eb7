"""The `uir` command line (also `python -m uir`). One subcommand per job."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from uir._src.core import errors


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="uir",
        description="uir: a tensor compiler from array programs and XLA's HLO to machine code.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="run uir's main job on a bundled example")
    demo.add_argument(
        "--size",
        type=_positive_int,
        default=1 << 22,
        help="elements per array in the JIT check (default: %(default)s)",
    )
    demo.set_defaults(handler=_run_demo)

    info = sub.add_parser("info", help="print what uir was built with and sees of the host")
    info.set_defaults(handler=_run_info)

    run = sub.add_parser("run", help="run an HLO module on given or random inputs")
    run.add_argument("file", help="an HLO text file")
    run.add_argument(
        "--inputs", help="an .npz with one array per parameter (arr_0, arr_1, ... or by name)"
    )
    run.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed for random inputs and rng ops (default: %(default)s)",
    )
    run.add_argument("--output", help="save the outputs to this .npz")
    run.add_argument(
        "--replicas",
        type=_positive_int,
        help="participants to run as (default: what the module's collectives need)",
    )
    run.add_argument(
        "--backend",
        choices=["cpu", "eval"],
        default="cpu",
        help="what runs it: compiled for this CPU, or the reference evaluator "
        "(default: %(default)s)",
    )
    run.add_argument(
        "--compare",
        action="store_true",
        help="also run it on the evaluator and report the largest difference per output",
    )
    run.add_argument(
        "--np",
        type=_positive_int,
        dest="np_",
        metavar="N",
        help="run it in N processes under mpirun, one participant each (Open MPI)",
    )
    run.set_defaults(handler=_run_run)

    opt = sub.add_parser(
        "opt", help="run passes on an HLO module and print the result (as hlo-opt)"
    )
    opt.add_argument("file", help="an HLO text file")
    which = opt.add_mutually_exclusive_group(required=True)
    which.add_argument("--passes", help="comma-separated pass names, run in order")
    which.add_argument("--pipeline", choices=["default"], help="a named pipeline")
    opt.add_argument(
        "--check",
        action="store_true",
        help="evaluate before and after every pass that changes the module; "
        "stop at the first one that changes the results",
    )
    opt.add_argument("--trace", action="store_true", help="print a table of the passes to stderr")
    opt.add_argument("--dump-to", help="write XLA-style dumps to this directory")
    opt.set_defaults(handler=_run_opt)

    rep = sub.add_parser(
        "report", help="the whole compile of an HLO module as one offline HTML page"
    )
    rep.add_argument("file", help="an HLO text file")
    rep.add_argument("-o", "--output", required=True, help="the HTML file to write")
    rep.add_argument(
        "--no-profile", action="store_true", help="leave out the profiled run on random inputs"
    )
    rep.add_argument(
        "--seed", type=int, default=0, help="seed for the random inputs (default: %(default)s)"
    )
    rep.set_defaults(handler=_run_report)
    return parser


def _run_report(args: argparse.Namespace) -> int:
    from uir._src.core import hlo
    from uir._src.tools.report import report

    module = hlo.load(args.file)
    r = report(module, profile=not args.no_profile, seed=args.seed)
    r.save(args.output)
    print(f"wrote {args.output}: {len(r.html) / 1024:.0f} KiB in {r.seconds:.2f} s")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    from uir._tools import demo

    return demo.run(size=args.size)


def _run_run(args: argparse.Namespace) -> int:
    from uir._tools import run

    return run.main(
        args.file,
        inputs=args.inputs,
        seed=args.seed,
        output=args.output,
        replicas=args.replicas,
        backend=args.backend,
        compare=args.compare,
        np_=args.np_,
        argv=args.argv,
    )


def _run_opt(args: argparse.Namespace) -> int:
    from uir._src.core import hlo, passes

    module = hlo.load(args.file)
    if args.passes is not None:
        names = [n.strip() for n in args.passes.split(",") if n.strip()]
        pipeline = passes.make_pipeline(names)
    else:
        pipeline = passes.default_pipeline()
    options = {"check": args.check or None, "dump_to": args.dump_to, "trace": args.trace}
    result = pipeline.run(module, **options)
    if args.trace:
        result, records = result
        print(passes.format_trace(records), file=sys.stderr)
    sys.stdout.write(result.to_text())
    return 0


def _run_info(args: argparse.Namespace) -> int:
    from uir._tools import demo

    demo.print_info()
    print_compile_flags()
    return 0


def print_compile_flags() -> None:
    """The CPU backend's compile flags (codegen/compile_flags.def) as
    UIR_FLAGS spells them, with their defaults and what they do."""
    import textwrap

    from uir import _core

    print("\n  compile flags (UIR_FLAGS=--cpu_<name>=value):")
    for row in _core.codegen.compile_flags():
        default = int(row["default"]) if row["kind"] == "switch" else row["default"]
        print(f"  --cpu_{row['name']}={default}")
        for line in textwrap.wrap(row["doc"], 72):
            print(f"      {line}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    # What followed the command's name (`uir run --np N` starts itself again).
    args.argv = argv[argv.index(args.command) + 1 :] if args.command in argv else []
    if args.version:
        from uir import __version__

        print(f"uir {__version__}")
        return 0
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args.handler(args))
    except (errors.Error, OSError, TypeError, ValueError) as e:
        # A user error is a message, not a traceback.
        print(f"uir: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
