"""The benchmark report: :func:`benchmark_report`, one self-contained page about what
``synth benchmark`` wrote.

The leaderboard (the ranking metric's mean and interval per system, and every summary metric as
a plot), every pair of systems compared on the ranking metric, and every item with each system's
score, the largest spread between them first. A benchmark file holds every system's report, so
the items are always there.
"""

from __future__ import annotations

import os
from typing import Any

from synth.evaluate.benchmark import BenchmarkResult
from synth.report import _figures
from synth.report._disagreement import spread_items
from synth.report._evaluation_rows import fmt, summary_metrics
from synth.report._html import given, render
from synth.report._rows import number
from synth.report.comparison import MINUS, Cells, delta_point, interval_text, pair_cells, section


def benchmark_report(
    result: BenchmarkResult | str | os.PathLike[str],
    *,
    title: str | None = None,
    source: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML page reporting on ``result`` (a :class:`~synth.BenchmarkResult` or its file)."""
    data, name = given(result, BenchmarkResult, BenchmarkResult.read, source)
    metric = data.rank_by
    metrics = [metric, *(m for m in _summary(data) if m != metric)]
    hint = (
        f"Every item, the largest spread of {metric} between the systems first; open a row for "
        "each system's answer and scores."
    )
    sections = [
        section(
            "leaderboard",
            f"Leaderboard (ranked by {metric})",
            ["leaderboard", "metrics"],
            table=_board_cells(data, metrics),
        ),
        section("pairs", f"Every pair compared on {metric}", ["pairs"], table=_pair_cells(data)),
        section(
            "items-section", "Items where the systems disagree most", [], paged=("items", hint)
        ),
    ]
    top = [(f"{row.rank}. {row.system}", fmt(row.metrics.get(metric))) for row in data.leaderboard]
    return render(
        "comparison.html.j2",
        title=title or f"synth benchmark{f': {name}' if name else ''}",
        facts=_facts(data, name),
        numbers=top[:6],
        warnings=[],
        sections=sections,
        data={
            "figures": _plots(data, metrics),
            "tables": {"items": spread_items(data.reports, metric)},
        },
    )


def _summary(data: BenchmarkResult) -> list[str]:
    first = next(iter(data.reports.values()), None)
    return summary_metrics(first) if first is not None else []


def _board_cells(data: BenchmarkResult, metrics: list[str]) -> Cells:
    metric, others = metrics[0], metrics[1:]
    headers = ["rank#", "system", f"{metric}#", "95% interval", *(f"{m}#" for m in others)]
    rows = [
        [
            str(row.rank),
            row.system,
            fmt(row.metrics.get(metric)),
            interval_text(row.intervals.get(metric)),
            *(fmt(row.metrics.get(m)) for m in others),
            str(row.errors),
        ]
        for row in data.leaderboard
    ]
    return [*headers, "errors#"], rows


def _pair_cells(data: BenchmarkResult) -> Cells:
    rows = [
        [pair.a, pair.b, *pair_cells(found)]
        for pair in data.comparisons
        for found in pair.comparison.metrics
        if found.metric == data.rank_by
    ]
    return ["a", "b", "n#", f"delta (b {MINUS} a)#", "95% interval", "p-value#"], rows


def _plots(data: BenchmarkResult, metrics: list[str]) -> dict[str, _figures.Figure]:
    metric = metrics[0]
    board = []
    for row in data.leaderboard:
        low, high = row.intervals.get(metric, (None, None))
        mean = number(row.metrics.get(metric))
        board.append((f"{row.rank}. {row.system}", mean, number(low), number(high)))
    pairs = [
        delta_point(f"{pair.b} {MINUS} {pair.a}", found)
        for pair in data.comparisons
        for found in pair.comparison.metrics
        if found.metric == metric
    ]
    series: dict[str, dict[str, Any]] = {
        row.system: {m: number(row.metrics.get(m)) for m in metrics} for row in data.leaderboard
    }
    return {
        "leaderboard": _figures.intervals(
            f"{metric}: mean and 95% interval", board, x_title=metric
        ),
        "metrics": _figures.bars("every summary metric", series),
        "pairs": _figures.intervals(
            f"paired difference in {metric}", pairs, x_title=metric, reference=0
        ),
    }


def _facts(data: BenchmarkResult, source: str | None) -> list[tuple[str, str]]:
    first = next(iter(data.reports.values()), None)
    facts = [
        ("benchmark", source),
        ("ranked by", data.rank_by),
        ("systems", ", ".join(row.system for row in data.leaderboard)),
        ("items", str(len(first.items)) if first is not None else None),
        ("judges", ", ".join(data.usage)),
    ]
    return [(label, value) for label, value in facts if value]


__all__ = ["benchmark_report"]
