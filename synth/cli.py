"""The ``synth`` command: argument parsing only; the work is done by the library functions.

Each subcommand has an ``_add_<name>`` function that declares its arguments and a ``_run_<name>``
function that calls the library. A :class:`~synth.errors.SynthError` becomes one line on stderr and
exit code 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from synth.errors import SynthError


# ---- ingest (foundation issue) -------------------------------------------------------------------
def _add_ingest(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="parse, chunk, embed and store documents")
    p.add_argument("paths", nargs="+", help="files or folders to ingest")
    p.set_defaults(func=_run_ingest)


def _run_ingest(args: argparse.Namespace) -> int:
    raise SynthError("ingest is not implemented yet")


# ---- export (foundation issue) -------------------------------------------------------------------
def _add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write a dataset in another tool's format")
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.set_defaults(func=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    raise SynthError("export is not implemented yet")


# ---- generate (pipeline issue) -------------------------------------------------------------------


# ---- evaluate, compare, benchmark (evaluator issue) ----------------------------------------------


# --------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="synth",
        description="Turn documents into an evaluation dataset, then score systems against it.",
    )
    parser.add_argument("--debug", action="store_true", help="show full tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, add in sorted(globals().items()):
        if name.startswith("_add_") and callable(add):
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except SynthError as exc:
        if args.debug:
            raise
        print(f"synth: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("synth: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
