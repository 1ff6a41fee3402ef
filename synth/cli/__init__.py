"""The ``synth`` command: argument parsing and printing only; the work is done by the library.

One module per command, in the order the data flows, each with an ``add_parser(sub)`` that declares
its arguments and a ``run(args)`` that calls the library and returns an exit code:

- :mod:`synth.cli.ingest`: documents into the store
- :mod:`synth.cli.generate`: documents into goldens (the pipeline), or ``--plan``
- :mod:`synth.cli.export`: a dataset into another format
- :mod:`synth.cli.inspect`: a dataset's numbers (counts, grounding, leaks, near duplicates)
- :mod:`synth.cli.report`: a dataset's HTML report (plots, stage counts, every golden)
- :mod:`synth.cli.review`: a dataset's review page in the browser (accept, reject, edit)
- :mod:`synth.cli.evaluate`, :mod:`synth.cli.compare`, :mod:`synth.cli.benchmark`: score systems
  on a dataset, compare two reports, rank several systems
- :mod:`synth.cli.gate`: a system against its baseline, the exit code CI acts on

What they print is drawn with rich by :mod:`synth.cli.console` and the ``_*_view`` modules,
so that the library itself prints nothing. A :class:`~synth.errors.SynthError` becomes one line on stderr and exit
code 2; ``--debug`` shows the traceback instead. Every exit code is one of the ``EXIT_*``
constants (docs/cli.md has the table).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from synth._interrupt import run_as_program
from synth._version import __version__
from synth.cli._exits import (
    EXIT_CLOSED_PIPE,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_NOTHING_READ,
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_STALE,
    ProgramEnd,
)
from synth.errors import SynthError, SynthWarning

if TYPE_CHECKING:
    from _typeshed import SupportsWrite


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, with where to look for the fix."""

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse's own swallows a failed write: a closed pipe must reach main() (exit 141)
        if message:
            (file or sys.stderr).write(message)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``synth`` command line, every command's arguments declared."""
    # the command modules are imported here, not when synth.cli is: importing it for main() or
    # the exit codes must not load the generation pipeline
    from synth.cli import (
        benchmark,
        compare,
        evaluate,
        export,
        gate,
        generate,
        ingest,
        inspect,
        refill,
        report,
        review,
        update,
    )

    commands = (
        ingest,
        generate,
        export,
        inspect,
        report,
        review,
        refill,
        update,
        evaluate,
        compare,
        benchmark,
        gate,
    )  # as the data flows
    parser = _Parser(
        prog="synth",
        description="Turn documents into an evaluation dataset, then score systems against it.",
    )
    debug_help = "show full tracebacks on errors"
    parser.add_argument("--debug", action="store_true", help=debug_help)
    parser.add_argument(
        "--version", action="version", version=f"synth {__version__}", help="print synth's version"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in commands:
        command.add_parser(sub)
    for subparser in sub.choices.values():
        # also accepted after the subcommand; SUPPRESS keeps a --debug given before it
        subparser.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: this process's arguments); return its exit code
    (one of the ``EXIT_*`` constants).

    Run as the program, Ctrl-C is honoured at every moment (see :mod:`synth._interrupt`): exit
    130 within a deadline, whatever the command was doing; and the process ends after its exit
    functions, without the interpreter's teardown (:class:`~synth.cli._exits.ProgramEnd`).
    """
    end = ProgramEnd() if argv is None and run_as_program() else None
    try:
        try:
            code = _main(argv)
        finally:
            sys.stdout.flush()  # a closed pipe is found here, not at exit where it cannot be handled
    except BrokenPipeError:
        code = _closed_pipe()
    except KeyboardInterrupt:  # pressed between the command's end and the handler's
        print("synth: interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    if end is not None:
        end.code = code
    return code


def _main(argv: Sequence[str] | None) -> int:
    from synth._interrupt import CtrlC

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    ctrl_c = args.ctrl_c = CtrlC()  # a command may say where a rerun resumes: ctrl_c.where
    as_program = argv is None and run_as_program()
    with ctrl_c if as_program else contextlib.nullcontext():
        code = _run_command(args)
        if ctrl_c.interrupted:  # even when something on the way swallowed the KeyboardInterrupt
            if as_program:
                ctrl_c.exit_now()
            return ctrl_c.exit_code
    return code


def _run_command(args: argparse.Namespace) -> int:
    """The command's exit code: a SynthError is one line on stderr and 2, Ctrl-C 130."""
    try:
        with warnings.catch_warnings():
            # the command says it in its own lines and its exit code (EXIT_PARTIAL)
            warnings.simplefilter("ignore", SynthWarning)
            return int(args.func(args) or 0)
    except BrokenPipeError:
        raise  # stdout was closed: see main()
    except KeyboardInterrupt:
        return _interrupted(args)
    except Exception as exc:
        ctrl_c = getattr(args, "ctrl_c", None)
        if ctrl_c is not None and ctrl_c.interrupted:
            # Ctrl-C turned into another error on its way out: pressed while numpy's C parts
            # load, it comes out as numpy's ImportError
            return _interrupted(args)
        if not isinstance(exc, (SynthError, OSError)) or args.debug:
            raise
        # OSError: a path the user gave cannot be read or written, or the disk is full
        from synth._files import os_error_line

        line = os_error_line(exc) if isinstance(exc, OSError) else str(exc)
        print(f"synth: error: {line}", file=sys.stderr)
        return EXIT_ERROR


def _interrupted(args: argparse.Namespace) -> int:
    """Say that the command was stopped (by Ctrl-C, or SIGTERM: the same path); its exit code."""
    ctrl_c = getattr(args, "ctrl_c", None)
    code = ctrl_c.exit_code if ctrl_c is not None else EXIT_INTERRUPTED
    print(
        "synth: interrupted" + (" (SIGTERM)" if code != EXIT_INTERRUPTED else ""),
        file=sys.stderr,
    )
    return code


def _closed_pipe() -> int:
    """End quietly after stdout was closed by its reader (``synth ... | head``).

    What is still buffered for stdout can never be written: stdout is pointed at the null device,
    so the interpreter's flush at exit neither fails nor prints "Exception ignored" (as Python's
    documentation of SIGPIPE recommends).
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (captured): nothing to redirect
        pass
    return EXIT_CLOSED_PIPE


__all__ = [
    "EXIT_CLOSED_PIPE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_NOTHING_READ",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_STALE",
    "build_parser",
    "main",
]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
