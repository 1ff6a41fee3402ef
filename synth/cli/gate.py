"""``synth gate``: a system scored on the goldens and compared with a baseline, item by item; the
exit code is the verdict CI acts on.

Exit codes: 0 when no metric is worse than the baseline by more than its margin with its 95%
interval clear of zero; 1 (:data:`~synth.cli._exits.EXIT_WORSE`) when one is; 3 when items failed
(the system or a judge) and nothing is worse; 2 for an error, a changed dataset or judge
included. ``--update-baseline`` writes this run's scores as the new baseline (0, or 3 when items
failed).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.cli._exits import EXIT_OK, EXIT_PARTIAL, EXIT_WORSE
from synth.cli._flags import add_status_argument, dataset_with_status, refuse_no_goldens
from synth.cli._judging import (
    add_judging_arguments,
    close_models,
    judging_kwargs,
    user_function,
)

if TYPE_CHECKING:
    from synth.evaluate.gate import GateResult, GateScores


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Declare ``synth gate`` and its arguments on ``sub``."""
    p = sub.add_parser(
        "gate",
        help="fail CI when a system got worse than its baseline (paired, with intervals)",
        description="Score a system on DATASET (or the answers stored in it) and compare every "
        "metric with the baseline, item by item. Exit 1 when a metric is worse than the baseline "
        "by more than its margin with its bootstrap 95% interval clear of zero, 0 otherwise, 3 "
        "when items failed, 2 when the dataset, the judges or the metrics are not those of the "
        "baseline. --update-baseline writes this run as the baseline.",
    )
    p.add_argument("dataset", help="a saved dataset (.json, .jsonl, .csv, .parquet)")
    p.add_argument(
        "--system",
        metavar="MODULE:FUNCTION",
        help="fn(question) -> answer (or {answer, contexts}); without it the dataset's stored "
        "answers (actual_output) are scored",
    )
    p.add_argument(
        "--baseline", required=True, metavar="FILE", help="the baseline's scores (.json)"
    )
    p.add_argument(
        "--update-baseline",
        action="store_true",
        help="write this run's scores to --baseline instead of comparing with it",
    )
    p.add_argument(
        "--margin",
        action="append",
        default=[],
        metavar="[METRIC=]X",
        help="how much worse a metric may get before the gate fails: X for every metric, "
        "METRIC=X for one; repeatable (0)",
    )
    p.add_argument("--junit", metavar="FILE", help="write the verdict as JUnit XML")
    p.add_argument(
        "--summary",
        metavar="FILE",
        help="write the Markdown summary here ($GITHUB_STEP_SUMMARY gets it too when set)",
    )
    p.add_argument(
        "--cache",
        metavar="FILE",
        help="answer repeated judge requests from this SQLite file (kept between CI runs, a "
        "judge pays once per answer)",
    )
    add_status_argument(p)
    add_judging_arguments(p)
    for action in p._actions:  # a gate's --metric names text metrics too: say so
        if action.dest == "metric":
            action.help = (
                "a metric to gate: exact_match, token_f1, or a judge metric (faithfulness, "
                "answer_relevance, context_precision, context_recall, answer_correctness); "
                "repeatable (default: the text metrics, and with judges faithfulness and "
                "answer_relevance)"
            )
    p.set_defaults(func=run)


def parse_margins(raw: list[str]) -> dict[str, float]:
    """``{metric: margin}`` from ``--margin`` values, ``"*"`` for a bare number."""
    from synth.errors import ConfigError

    margins: dict[str, float] = {}
    for value in raw:
        name, sep, number = value.partition("=")
        key = name.strip() if sep else "*"
        try:
            margin = float(number if sep else value)
        except ValueError:
            margin = math.nan
        if not key or not (0 <= margin < math.inf):
            raise ConfigError(f"--margin takes X or METRIC=X with X a number >= 0, got {value!r}")
        margins[key] = margin
    return margins


def _metric_kwargs(args: argparse.Namespace, kwargs: dict[str, Any]) -> None:
    """``--metric`` names what is gated, text metrics (exact_match, token_f1) included: those go to
    the text metrics, and only they are scored among them."""
    from synth.errors import ConfigError
    from synth.evaluate.judge import JUDGE_METRICS
    from synth.evaluate.text import TEXT_METRICS

    named = args.metric or []
    text = [m for m in named if m in TEXT_METRICS]
    judged = [m for m in named if m not in TEXT_METRICS]
    for name in judged:
        if name not in JUDGE_METRICS:
            # a typo (token_f for token_f1) is said as one, not as a metric that needs a judge
            import difflib

            known = [*TEXT_METRICS, *JUDGE_METRICS]
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}" if close else f"known: {', '.join(known)}"
            raise ConfigError(f"--metric {name}: unknown metric ({hint})")
    if kwargs["judges"] is None and (judged or kwargs["criteria"]):
        what = ", ".join(judged) or "--criteria"
        raise ConfigError(
            f"{what} needs a judge: name one with --judge [NAME=]provider:model (or "
            "MODULE:FUNCTION)"
        )
    if text:
        kwargs["text_metrics"] = list(dict.fromkeys([*text, *kwargs.get("text_metrics", [])]))
        kwargs["metrics"] = judged if judged or kwargs["judges"] is None else []


def run(args: argparse.Namespace) -> int:
    """Score, compare with the baseline (or write it), write the outputs; the verdict's code."""
    from synth._callables import load_callable
    from synth.errors import ConfigError
    from synth.evaluate._items import as_items
    from synth.evaluate.gate import (
        GateScores,
        check_comparable,
        gate_scores,
        judge_gate,
        planned_scores,
    )

    margins = parse_margins(args.margin)
    baseline_path = Path(args.baseline)
    _check_folders(args)
    baseline = None if args.update_baseline else GateScores.read(baseline_path)
    items = as_items(dataset_with_status(args.dataset, args.status))
    refuse_no_goldens(len(items), args.dataset)
    if not args.system and not any(item.answer is not None for item in items):
        # a gate over no answer compares nothing and would pass for ever: say what is missing
        raise ConfigError(
            f"{args.dataset}: no golden has a stored answer (actual_output) to score; name the "
            "system with --system MODULE:FUNCTION"
        )
    kwargs = judging_kwargs(args, items=len(items))
    _metric_kwargs(args, kwargs)
    if baseline is not None:
        # a changed dataset, judge, rubric or metric is refused before anything is paid for
        try:
            planned = planned_scores(
                items,
                judges=kwargs["judges"],
                metrics=kwargs["metrics"],
                text_metrics=kwargs.get("text_metrics"),
                criteria=kwargs["criteria"],
            )
            check_comparable(baseline, planned, source=str(baseline_path))
        except BaseException:
            close_models(kwargs["judges"])
            raise
    system = user_function(load_callable(args.system), args) if args.system else None
    cache = _cache(args.cache)
    try:
        current = gate_scores(
            system,
            items,
            judges=kwargs["judges"],
            metrics=kwargs["metrics"],
            text_metrics=kwargs.get("text_metrics"),
            criteria=kwargs["criteria"],
            n_jobs=kwargs["n_jobs"],
            cache=cache,
            seed=args.seed,
        )
    finally:
        close_models(kwargs["judges"])
        if cache is not None:
            cache.close()
    if baseline is None:
        current.write(baseline_path)
        if args.json:
            written = {"baseline": str(baseline_path), "items": current.n_items}
            written |= {"metrics": current.metrics, "failed_items": current.failed_items}
            print(json.dumps(written))
        else:
            print(
                f"wrote the baseline {baseline_path}: {current.n_items} "
                f"item{'' if current.n_items == 1 else 's'}, "
                f"{', '.join(current.metrics)}"
            )
        return _failed_code(current)
    result = judge_gate(
        baseline, current, margins=margins, seed=args.seed, source=str(baseline_path)
    )
    _write_outputs(result, args)
    return _verdict_code(result)


def _check_folders(args: argparse.Namespace) -> None:
    """Refuse, before anything is scored, a baseline that cannot be a document and a report whose
    folder does not exist: the scores paid for must not be lost to a typo in a path. A new
    baseline's folder is made."""
    from synth.errors import ConfigError

    if Path(args.baseline).suffix.lower() not in (".json", ".yaml", ".yml", ".toml"):
        # checked first: a .jsonl or .csv baseline would be refused only after the run was paid
        raise ConfigError(
            f"--baseline {args.baseline}: a gate baseline is one document, .json, .yaml or .toml"
        )
    outputs = [("--junit", args.junit), ("--summary", args.summary)]
    if args.update_baseline and args.baseline:
        from synth._files import check_writable

        check_writable(args.baseline)
        # a first baseline goes where the repository will keep it (ci/baseline.json): its folder
        # is made, as nothing is lost by a new folder
        Path(args.baseline).resolve().parent.mkdir(parents=True, exist_ok=True)
    for flag, path in outputs:
        if path and not Path(path).resolve().parent.is_dir():
            folder = Path(path).parent
            what = "is a file, not a folder" if folder.exists() else "does not exist"
            raise ConfigError(f"{flag} {path}: the folder {folder} {what}")


def _cache(path: str | None) -> Any:
    if path is None:
        return None
    from synth.llm.sqlite_cache import SQLiteCache

    return SQLiteCache(path)


def _write_outputs(result: GateResult, args: argparse.Namespace) -> None:
    from synth.cli._gate_summary import append_summary, summary_markdown

    if args.junit:
        from synth.cli._gate_junit import write_junit

        write_junit(args.junit, result, suite=f"synth gate {Path(args.dataset).name}")
    markdown = summary_markdown(
        result, dataset=Path(args.dataset).name, baseline=Path(args.baseline).name
    )
    if args.summary:
        from synth._files import write_atomic

        write_atomic(args.summary, markdown)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        append_summary(step_summary, markdown)
    if args.json:
        from synth.evaluate import _io

        print(_io.dumps(result.model_dump(), "json"), end="")
        return
    from synth.cli._evaluate_view import show

    show(_gate_table(result))


def _gate_table(result: GateResult) -> list[Any]:
    from rich.table import Table
    from rich.text import Text

    from synth.cli._evaluate_view import fmt, interval

    table = Table(title="gate (paired by item, change = current - baseline)")
    for column in ("metric", "n", "baseline", "current", "change", "95% CI", "margin", "verdict"):
        table.add_column(column, justify="left" if column in ("metric", "verdict") else "right")
    for row in result.metrics:
        table.add_row(
            row.metric,
            str(row.n),
            fmt(row.baseline),
            fmt(row.current),
            fmt(row.delta),
            interval((row.ci_low, row.ci_high)),
            f"{row.margin:g}",
            "WORSE" if row.worse else "ok",
        )
    return [table, Text(result.verdict(), style="green" if result.passed else "bold red")]


def _failed_code(scores: GateScores) -> int:
    if not scores.failed_items:
        return EXIT_OK
    first = next(item for item in scores.items if item.errors)
    source, error = next(iter(first.errors.items()))
    sys.stdout.flush()
    print(
        f"synth: {scores.failed_items} of {scores.n_items} items failed; the first, item "
        f"{first.id}: {source}: {error} (exit code {EXIT_PARTIAL})",
        file=sys.stderr,
    )
    return EXIT_PARTIAL


def _verdict_code(result: GateResult) -> int:
    sys.stdout.flush()
    if not result.passed:
        print(f"synth: {result.verdict()} (exit code {EXIT_WORSE})", file=sys.stderr)
        return EXIT_WORSE
    if result.failed_items:
        print(
            f"synth: {result.failed_items} of {result.n_items} items failed; the first, "
            f"{result.failures[0]} (exit code {EXIT_PARTIAL})",
            file=sys.stderr,
        )
        return EXIT_PARTIAL
    return EXIT_OK


__all__ = ["add_parser", "parse_margins", "run"]
