"""The comparison report: :func:`comparison_report`, one self-contained page about what
``synth compare`` wrote, and the pieces the benchmark report shares with it.

The paired difference of every metric with its bootstrap interval and sign-flip p-value, both
means as a plot, and the items on which the two reports disagree most. A comparison file holds
no items: give the two reports it was made of (``reports=``) for that table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.evaluate.compare import Comparison, MetricComparison
from synth.evaluate.report import Evaluation, read_report
from synth.report import _figures
from synth.report._disagreement import paired_items
from synth.report._evaluation_rows import fmt
from synth.report._html import given, render
from synth.report._rows import number

ReportSource = Evaluation | str | os.PathLike[str]
Cells = tuple[list[str], list[list[str]]]  # a small table: headers, then rows of text
#: the plots that take the page's width: a line per metric or system, labelled on the left
WIDE = ("deltas", "leaderboard", "pairs")
MINUS = "\u2212"


def comparison_report(
    comparison: Comparison | str | os.PathLike[str],
    *,
    reports: tuple[ReportSource, ReportSource] | None = None,
    names: tuple[str, str] | None = None,
    title: str | None = None,
    source: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML page reporting on ``comparison`` (a :class:`~synth.Comparison` or its file).

    ``reports`` are the two reports it compared, A then B (objects or files): with them the page
    lists the items they disagree on most. ``names`` name A and B (default: the reports' file
    names, else "A" and "B").
    """
    data, name = given(comparison, Comparison, Comparison.read, source)
    names = names or _names(reports)
    pair = (_report(reports[0]), _report(reports[1])) if reports is not None else None
    sections = [
        section(
            "metrics", "Paired differences", ["deltas", "means"], table=_metric_cells(data, names)
        ),
        _disagreement_section(pair, data),
    ]
    tables = {"items": paired_items(pair[0], pair[1], names)} if pair is not None else {}
    a, b = names
    summary = [r for r in data.metrics if "/" not in r.metric]
    return render(
        "comparison.html.j2",
        title=title or f"synth comparison: {b} against {a}{f' ({name})' if name else ''}",
        facts=_facts(data, names, name),
        numbers=[(f"\u0394 {r.metric}", fmt(r.delta)) for r in summary[:6]],
        warnings=data.warnings,
        sections=sections,
        data={"figures": _plots(data, names), "tables": tables},
    )


def section(
    id: str,
    title: str,
    figures: Sequence[str],
    *,
    table: Cells | None = None,
    paged: tuple[str, str] | None = None,
    text: str | None = None,
) -> dict[str, Any]:
    """One section of a page: a title, a line of text, a small table, plots, a paged table."""
    return {
        "id": id,
        "title": title,
        "figures": list(figures),
        "wide": [key for key in figures if key in WIDE],
        "table": table,
        "paged": paged,
        "text": text,
    }


def pair_cells(row: MetricComparison) -> list[str]:
    """n, delta, interval and p-value (marked MC when estimated, not exact) of one metric."""
    p_value = fmt(row.p_value, 4) + ("" if row.exact else " (MC)")
    return [str(row.n), fmt(row.delta), interval_text((row.ci_low, row.ci_high)), p_value]


def interval_text(pair: tuple[float, float] | None) -> str:
    """``[low, high]`` for the page, or an em dash when there is none."""
    if pair is None or number(pair[0]) is None:
        return "\u2014"
    return f"[{fmt(pair[0])}, {fmt(pair[1])}]"


def delta_point(label: str, row: MetricComparison) -> tuple[str, Any, Any, Any]:
    """A line of a deltas plot: ``label`` with the p-value, the delta and its interval."""
    text = f"{label} (p {fmt(row.p_value, 4)})"
    return text, number(row.delta), number(row.ci_low), number(row.ci_high)


# ---- the pieces of the comparison page ---------------------------------------------------------
def _metric_cells(data: Comparison, names: tuple[str, str]) -> Cells:
    a, b = names
    headers = ["metric", "n#", f"{a}#", f"{b}#", f"delta ({b} {MINUS} {a})#"]
    rows = [[r.metric, str(r.n), fmt(r.a), fmt(r.b), *pair_cells(r)[1:]] for r in data.metrics]
    return [*headers, "95% interval", "p-value#"], rows


def _plots(data: Comparison, names: tuple[str, str]) -> dict[str, _figures.Figure]:
    a, b = names
    means = {
        a: {r.metric: number(r.a) for r in data.metrics},
        b: {r.metric: number(r.b) for r in data.metrics},
    }
    points = [delta_point(r.metric, r) for r in data.metrics]
    return {
        "deltas": _figures.intervals(
            "paired difference and 95% interval", points, x_title=f"{b} {MINUS} {a}", reference=0
        ),
        "means": _figures.bars("means on the paired items", means),
    }


def _disagreement_section(
    pair: tuple[Evaluation, Evaluation] | None, data: Comparison
) -> dict[str, Any]:
    title = "Items where the two disagree most"
    if pair is None:
        text = (
            "A comparison file holds no items: give the two reports it was made of "
            "(synth report COMPARISON --reports A B) to list the items they disagree on most."
        )
        return section("items-section", title, [], text=text)
    paired = len({item.id for item in pair[0].items} & {item.id for item in pair[1].items})
    note = None
    if paired != data.n_paired:
        note = f"These reports pair {paired} items; the comparison paired {data.n_paired}."
    hint = "Every paired item, the largest difference first; open a row for both answers."
    return section("items-section", title, [], paged=("items", hint), text=note)


def _names(reports: Sequence[ReportSource] | None) -> tuple[str, str]:
    if reports is not None:
        stems = [Path(os.fspath(r)).stem for r in reports if not isinstance(r, Evaluation)]
        if len(stems) == 2 and stems[0] != stems[1]:
            return stems[0], stems[1]
    return "A", "B"


def _report(report: ReportSource) -> Evaluation:
    return report if isinstance(report, Evaluation) else read_report(os.fspath(report))


def _facts(data: Comparison, names: tuple[str, str], source: str | None) -> list[tuple[str, str]]:
    facts = [
        ("comparison", source),
        ("A (baseline)", names[0]),
        ("B", names[1]),
        ("items", f"{data.n_paired} paired ({data.n_a} in A, {data.n_b} in B)"),
        ("seed", str(data.seed)),
    ]
    return [(label, value) for label, value in facts if value]


__all__ = [
    "Cells",
    "comparison_report",
    "delta_point",
    "interval_text",
    "pair_cells",
    "section",
]
