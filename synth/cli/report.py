"""``synth report``: a dataset, an evaluation report, a comparison or a benchmark as one
self-contained HTML page; and where the other commands' ``--report`` writes theirs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from synth.cli._exits import EXIT_OK


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth report`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "report",
        help="write the HTML report of a dataset, an evaluation report, a comparison or a "
        "benchmark",
        description="Write one self-contained HTML file (it opens from disk, no network) about "
        "FILE, whichever of these it is (told from its contents). A dataset: the run's models, "
        "seed, cost and stage counts, plots of what it holds, and every golden with its context "
        "and cited spans. A `synth evaluate` report: every metric's mean and interval, the "
        "per-item scores, the judges' agreement, the failures and every item with what each "
        "judge said. A `synth compare` or `synth benchmark` result: the paired differences with "
        "intervals and p-values, the scores as a plot, and the items the systems disagree on "
        "most.",
    )
    p.add_argument(
        "file",
        metavar="FILE",
        help="a dataset (.json, .jsonl, .csv, .parquet), or what synth evaluate, compare or "
        "benchmark wrote (.json, .jsonl, .yaml, .toml)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="the HTML file to write (default: FILE's name with .html)",
    )
    p.add_argument(
        "--manifest",
        metavar="MANIFEST",
        help="a dataset's run manifest.json, or its run directory (default: found from the "
        "dataset's run id in .synth/runs/)",
    )
    p.add_argument(
        "--reports",
        nargs=2,
        metavar=("A", "B"),
        help="a comparison's two reports, as given to synth compare: adds the items they "
        "disagree on most",
    )
    p.add_argument("--title", help="the page's title (default: names FILE)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the report of ``args.file`` and say where; EXIT_OK when written."""
    from synth._files import write_atomic
    from synth.errors import ConfigError
    from synth.report._kinds import NOUNS, kind_of

    output = Path(args.output) if args.output else beside(args.file)
    if output.resolve() == Path(args.file).resolve():
        raise ConfigError(f"{output}: the report would overwrite {args.file}; name another -o")
    kind = kind_of(args.file)
    if args.manifest and kind != "dataset":
        raise ConfigError(f"--manifest goes with a dataset; {args.file} holds {NOUNS[kind]}")
    if args.reports and kind != "comparison":
        raise ConfigError(f"--reports goes with a comparison; {args.file} holds {NOUNS[kind]}")
    html, what = _page(kind, args)
    write_atomic(output, html)
    print(f"wrote the report of {what} to {output}")
    return EXIT_OK


def _page(kind: str, args: argparse.Namespace) -> tuple[str, str]:
    """The page and what it is of (for the line that says where it went)."""
    from synth import report as pages

    if kind == "dataset":
        from synth.dataset import Dataset

        dataset = Dataset.load(args.file)
        html = pages.dataset_report(
            dataset, manifest=args.manifest, title=args.title, source=args.file
        )
        return html, f"{len(dataset)} goldens"
    if kind == "evaluation":
        from synth.evaluate.report import read_report
        from synth.report._kinds import read_tool_calls

        calls = read_tool_calls(args.file)
        if calls is not None:
            html = pages.evaluation_report(calls, title=args.title, source=args.file)
            return html, f"a tool call evaluation of {len(calls.items)} goldens"

        report = read_report(args.file)
        html = pages.evaluation_report(report, title=args.title, source=args.file)
        return html, f"an evaluation of {len(report.items)} items ({report.kind})"
    if kind == "comparison":
        reports = tuple(args.reports) if args.reports else None
        html = pages.comparison_report(args.file, reports=reports, title=args.title)
        return html, "a comparison" + (" with its two reports" if reports else "")
    html = pages.benchmark_report(args.file, title=args.title)
    return html, "a benchmark"


def add_report_flag(p: argparse.ArgumentParser, what: str) -> None:
    """Declare ``--report`` on ``p``: the HTML page of ``what`` it writes with ``-o``."""
    p.add_argument(
        "--report",
        action="store_true",
        help=f"also write {what}'s HTML report beside -o (its name with .html; see synth report)",
    )


def check_report_flag(args: argparse.Namespace) -> None:
    """Refuse ``--report`` without ``-o`` before any work: the page goes beside that file."""
    from synth.errors import ConfigError

    if args.report and not args.output:
        raise ConfigError("--report writes the HTML beside the -o file: give -o too")


def check_report_output(output: str | None, format_for: Callable[[str], object]) -> None:
    """Refuse ``-o`` before any system or judge is called, not after: a suffix ``format_for``
    does not take, or a path that cannot be written."""
    if output:
        from synth._files import check_writable

        format_for(output)
        check_writable(output)


def write_beside(output: str | Path, html: str) -> Path:
    """Write ``html`` beside the file ``output`` (:func:`beside`) and return where."""
    from synth._files import write_atomic

    return write_atomic(beside(output), html)


def beside(output: str | Path) -> Path:
    """Where ``--report`` writes the page of the file ``output``: the same name, with .html."""
    return Path(output).with_suffix(".html")


__all__ = [
    "add_parser",
    "add_report_flag",
    "beside",
    "check_report_output",
    "check_report_flag",
    "run",
    "write_beside",
]
