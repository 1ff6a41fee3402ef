"""``synth compare``: two reports in; per metric both means, the delta and its significance out."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from synth.cli._exits import EXIT_OK
from synth.cli.report import add_report_flag, check_report_flag, check_report_output, write_beside

if TYPE_CHECKING:
    from synth.evaluate.compare import Comparison


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth compare`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "compare",
        help="compare two reports item by item",
        description="Pair two reports by item id and show, per metric, both means, the delta "
        "(B - A) with its bootstrap 95% interval and the paired sign-flip p-value (exact for "
        "few items, Monte Carlo with --seed otherwise).",
    )
    p.add_argument("a", metavar="A", help="the baseline report")
    p.add_argument("b", metavar="B", help="the report compared with it")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and tests (0)")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="write the comparison (.json/.yaml/.toml)"
    )
    add_report_flag(p, "the comparison")
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Compare report ``args.b`` with the baseline ``args.a``; write and print the comparison."""
    from synth.cli._evaluate_view import comparison_table, show
    from synth.evaluate import _io
    from synth.evaluate.compare import Comparison
    from synth.evaluate.report import read_report

    check_report_flag(args)
    check_report_output(args.output, Comparison.format_for)
    a, b = read_report(args.a), read_report(args.b)
    comparison = a.compare(b, seed=args.seed)
    _refuse_nothing_compared(comparison, args.a, args.b)
    page = None
    if args.output:
        comparison.write(args.output)
    if args.report:
        from synth.report import comparison_report

        names = Path(args.a).stem, Path(args.b).stem
        html = comparison_report(
            comparison,
            reports=(a, b),
            names=names if names[0] != names[1] else None,
            source=args.output,
        )
        page = write_beside(args.output, html)
    if args.json:
        print(_io.dumps(comparison.model_dump(), "json"), end="")
    else:
        show(comparison_table(comparison, Path(args.a).stem, Path(args.b).stem))
        if page is not None:
            print(f"report: {page}")
    return EXIT_OK


def _refuse_nothing_compared(comparison: Comparison, a: str, b: str) -> None:
    """A ConfigError when no metric has an item scored in both reports: a table of dashes with
    exit 0 would read as "no difference" (every item of one report failed, or the two are of
    different metrics)."""
    from synth.errors import ConfigError

    if any(row.n for row in comparison.metrics):
        return
    if not comparison.metrics:
        raise ConfigError(f"nothing to compare: {a} and {b} have no metric in common")
    raise ConfigError(
        f"nothing to compare: no item has a score in both {a} and {b} "
        f"({comparison.n_paired} item ids in both, of {comparison.n_a} and {comparison.n_b}; "
        "items that failed have no score)"
    )


__all__ = ["add_parser", "run"]
