"""``synth benchmark``: several systems on one dataset in; a leaderboard and pairwise comparisons
out."""

from __future__ import annotations

import argparse

from synth.cli._flags import refuse_no_goldens
from synth.cli._judging import (
    add_judging_arguments,
    close_models,
    failed_items_code,
    judging_kwargs,
    user_function,
)
from synth.cli.report import add_report_flag, check_report_flag, check_report_output, write_beside


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth benchmark`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "benchmark",
        help="run several systems on one dataset: a leaderboard and pairwise comparisons",
        description="Run every system on the same items with the same judges (every judge call "
        "cached), rank them with bootstrap intervals and compare every pair.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "--system",
        action="append",
        required=True,
        metavar="NAME=MODULE:FUNCTION",
        help="a system fn(question) -> answer; repeat for each system",
    )
    p.add_argument(
        "--rank-by",
        metavar="METRIC",
        help="the ranking metric (default: with judges the first judge metric, else token_f1)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write the result (.json/.yaml/.toml)")
    add_report_flag(p, "the result")
    add_judging_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run and rank the systems, write and print the result; EXIT_PARTIAL when items failed."""
    from synth.cli._evaluate_view import benchmark_tables, show
    from synth.evaluate import _io
    from synth.evaluate._items import as_items
    from synth.evaluate._jobs import failure_summary
    from synth.evaluate._specs import systems
    from synth.evaluate.benchmark import BenchmarkResult, benchmark

    check_report_flag(args)
    check_report_output(args.output, BenchmarkResult.format_for)
    found = {name: user_function(fn, args) for name, fn in systems(args.system).items()}
    # read first: the judges' limiter starts at the calls every system's items will cost
    items = as_items(args.dataset)
    refuse_no_goldens(len(items), args.dataset)
    kwargs = judging_kwargs(args, items=len(items) * len(found))
    try:
        result = benchmark(found, items, rank_by=args.rank_by, **kwargs)
    finally:
        close_models(kwargs["judges"])
    page = None
    if args.output:
        result.write(args.output)
    if args.report:
        from synth.report import benchmark_report

        page = write_beside(args.output, benchmark_report(result, source=args.output))
    if args.json:
        print(_io.dumps(result.model_dump(), "json"), end="")
    else:
        show(benchmark_tables(result))
        if args.output:
            print(f"wrote {args.output}")
        if page is not None:
            print(f"report: {page}")
    return failed_items_code(
        [(f"system {name}: ", failure_summary(report)) for name, report in result.reports.items()]
    )


__all__ = ["add_parser", "run"]
