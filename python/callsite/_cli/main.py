"""``python -m callsite`` (and the ``callsite`` script): version, C++ package paths, and the demo,
doctor and bench commands."""
from __future__ import annotations

import argparse
import sys


def _result_path(path: str) -> str:
    # Imported when --json is given: the result files' module is not needed for anything else.
    from .results import result_path

    return result_path(path)


def _parser() -> argparse.ArgumentParser:
    from .._version import __version__

    parser = argparse.ArgumentParser(
        prog="python -m callsite",
        description="callsite: fast call-stack capture and source locations for Python-fronted "
                    "compilers, DSLs and JITs.")
    parser.add_argument("--version", action="version", version=f"callsite {__version__}")
    paths = parser.add_mutually_exclusive_group()
    paths.add_argument("--cmake-dir", action="store_true",
                       help="print the directory of callsiteConfig.cmake (for callsite_ROOT)")
    paths.add_argument("--include-dir", action="store_true",
                       help="print the directory holding the C++ headers (callsite/*.h)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="run the demos (MLIR's own traceback switch against "
                                       "callsite's, a DSL with MLIR locations, native frames)")
    demo.add_argument("sections", nargs="*", metavar="SECTION",
                      help="which demos (default: all of switch, dsl, native, pycde)")

    doctor = sub.add_parser("doctor", help="what this installation can do, and why")
    doctor.add_argument("--json", action="store_true", help="print callsite.doctor() as JSON")

    bench = sub.add_parser("bench", help="a short benchmark against the installed peers")
    bench.add_argument("--json", metavar="FILE", type=_result_path,
                       help="also write the results as JSON to FILE ('-': standard output)")
    bench.add_argument("--plot", metavar="PNG",
                       help='also draw the ratios into PNG (needs matplotlib: '
                            'pip install "callsite[plot]")')
    bench.add_argument("--quick", action="store_true", help="fewer repeats (noisier)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.cmake_dir or args.include_dir:
        if args.command:
            parser.error(f"--{'cmake' if args.cmake_dir else 'include'}-dir takes no command")
        from .. import _paths

        try:
            print(_paths.cmake_dir() if args.cmake_dir else _paths.include_dir())
        except FileNotFoundError as e:
            print(e, file=sys.stderr)
            return 1
        return 0
    if args.command == "demo":
        from . import demo

        unknown = [s for s in args.sections if s not in demo.SECTIONS]
        if unknown:
            parser.error(f"unknown demo section {unknown[0]!r} "
                         f"(choose from {', '.join(demo.SECTIONS)})")
        try:
            return demo.run(args.sections, sys.stdout)
        except FileNotFoundError as e:
            print(e, file=sys.stderr)
            return 1
    if args.command == "doctor":
        from . import doctor

        report = doctor.doctor()
        if args.json:
            import json

            print(json.dumps(report, indent=2, default=str))
        else:
            print(doctor.format_report(report))
        return 0
    if args.command == "bench":
        from . import bench

        return bench.main(json_path=args.json, plot_path=args.plot, quick=args.quick)
    parser.print_help()
    return 0
