"""How ``synth evaluate``, ``compare`` and ``benchmark`` show a report: readable tables (rich).

Each ``*_tables`` function returns rich renderables; :func:`show` prints them. NaN shows as "-".
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from synth.cli.console import CommandConsole, print_all_fitted

if TYPE_CHECKING:
    from synth.evaluate.benchmark import BenchmarkResult
    from synth.evaluate.compare import Comparison
    from synth.evaluate.report import Evaluation


def fmt(value: float, digits: int = 3) -> str:
    """Return ``value`` rounded for a table, or "-" when it is NaN."""
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def interval(pair: tuple[float, float]) -> str:
    """Return ``[low, high]`` for a table."""
    low, high = pair
    return "-" if math.isnan(low) else f"[{fmt(low)}, {fmt(high)}]"


def metrics_table(report: Evaluation, title: str) -> Table:
    """Mean, bootstrap 95% interval and coverage of each metric."""
    n = len(report.items)
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("95% CI", justify="right")
    table.add_column("coverage", justify="right")
    for metric, mean in report.metrics.items():
        table.add_row(
            metric,
            fmt(mean),
            interval(report.intervals.get(metric, (math.nan, math.nan))),
            f"{report.coverage.get(metric, 0)}/{n}",
        )
    return table


def _judges_table(
    judges: dict[str, dict[str, Any]], usage: dict[str, dict[str, int]], errors: dict[str, int]
) -> Table:
    table = Table(title="judges")
    table.add_column("judge")
    table.add_column("model", overflow="fold")
    for column in ("replies", "cached", "in tokens", "out tokens", "errors"):
        table.add_column(column, justify="right")
    for name, identity in judges.items():
        counts = usage.get(name, {})
        model = f"{identity.get('provider', '')}:{identity.get('model', '')}"
        table.add_row(
            name,
            model,
            str(counts.get("responses", 0)),
            str(counts.get("cached_responses", 0)),
            str(counts.get("input_tokens", 0)),
            str(counts.get("output_tokens", 0)),
            str(errors.get(name, 0)),
        )
    return table


def evaluation_tables(report: Evaluation) -> list[Any]:
    """The tables of any report: metrics, then judges, agreement and failures when it has them."""
    out: list[Any] = [metrics_table(report, f"{report.kind} report: {len(report.items)} items")]
    judges = getattr(report, "judges", {})
    if judges:
        out.append(
            _judges_table(judges, getattr(report, "usage", {}), getattr(report, "errors", {}))
        )
    summary = getattr(report, "summary", None)
    if summary:
        names = getattr(report, "names", ("a", "b"))
        table = Table(title=f"preference: {names[0]} vs {names[1]}")
        for column in (
            "judge",
            f"{names[0]} wins",
            f"{names[1]} wins",
            "ties",
            "win rate",
            "position consistency",
        ):
            table.add_column(column, justify="left" if column == "judge" else "right")
        for judge, row in summary.items():
            table.add_row(
                judge,
                str(row["wins"].get(names[0], 0)),
                str(row["wins"].get(names[1], 0)),
                str(row["ties"]),
                fmt(row["win_rate"]),
                fmt(row["position_consistency"]),
            )
        out.append(table)
    agreement = getattr(report, "agreement", {})
    if agreement:
        lines = ", ".join(f"{metric} {fmt(alpha)}" for metric, alpha in agreement.items())
        out.append(Text(f"judge agreement (Krippendorff's alpha): {lines}"))
    errors = getattr(report, "errors", {})
    failed = {k: v for k, v in errors.items() if v}
    if failed:
        out.append(
            Text("failures: " + ", ".join(f"{k} {v}" for k, v in failed.items()), style="yellow")
        )
    return out


def comparison_table(comparison: Comparison, a: str = "A", b: str = "B") -> list[Any]:
    """Per metric: both means, the delta (b - a) with its interval, and the p-value."""
    if a == b:  # two reports of the same file name: the columns must still tell them apart
        a, b = f"A ({a})", f"B ({b})"
    table = Table(title=f"{b} vs {a} (paired by item, delta = {b} - {a})")
    for column in ("metric", "n", a, b, "delta", "95% CI", "p-value"):
        table.add_column(column, justify="left" if column == "metric" else "right")
    for row in comparison.metrics:
        p = fmt(row.p_value, 4) + ("" if row.exact else " (MC)")
        table.add_row(
            row.metric,
            str(row.n),
            fmt(row.a),
            fmt(row.b),
            fmt(row.delta),
            interval((row.ci_low, row.ci_high)),
            p,
        )
    out: list[Any] = [table]
    out.extend(Text(f"note: {w}", style="yellow") for w in comparison.warnings)
    return out


def benchmark_tables(result: BenchmarkResult) -> list[Any]:
    """The leaderboard, then the pairwise comparisons on the ranking metric."""
    metric = result.rank_by
    ties = f"; ties by {', '.join(result.tie_breakers)}" if result.tie_breakers else ""
    board = Table(title=f"leaderboard (ranked by {metric}{ties})")
    board.add_column("rank", justify="right")
    board.add_column("system")
    board.add_column(metric, justify="right")
    board.add_column("95% CI", justify="right")
    # per-judge scores stay in the reports; the board shows text metrics and panel scores
    first = result.leaderboard[0].metrics if result.leaderboard else {}
    others = [m for m in first if m != metric and "/" not in m]
    for other in others:
        board.add_column(other, justify="right")
    board.add_column("errors", justify="right")
    for row in result.leaderboard:
        board.add_row(
            str(row.rank),
            row.system,
            fmt(row.metrics[metric]),
            interval(row.intervals[metric]),
            *(fmt(row.metrics[m]) for m in others),
            str(row.errors),
        )
    pairs = Table(title=f"pairwise comparisons on {metric}")
    for column in ("a", "b", "delta (b - a)", "95% CI", "p-value"):
        pairs.add_column(column, justify="left" if column in ("a", "b") else "right")
    for pair in result.comparisons:
        try:
            found = pair.comparison[metric]
        except KeyError:
            continue
        pairs.add_row(
            pair.a,
            pair.b,
            fmt(found.delta),
            interval((found.ci_low, found.ci_high)),
            fmt(found.p_value, 4) + ("" if found.exact else " (MC)"),
        )
    out: list[Any] = [board, pairs]
    if result.usage:
        calls = ", ".join(
            f"{judge} {counts.get('responses', 0)} ({counts.get('cached_responses', 0)} cached)"
            for judge, counts in result.usage.items()
        )
        out.append(Text(f"judge replies over all systems: {calls}"))
    return out


def show(renderables: Iterable[Any], console: Console | None = None) -> None:
    """Print ``renderables`` to ``console`` (stdout by default), every column whole: wrapped to a
    terminal's width, at the table's natural width when piped (see :mod:`synth.cli.console`)."""
    print_all_fitted(console or CommandConsole(), renderables)


__all__ = ["benchmark_tables", "comparison_table", "evaluation_tables", "fmt", "show"]
