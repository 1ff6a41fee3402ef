"""The items on which systems disagree most, as a table for the comparison and benchmark reports.

Two reports (a comparison): each item's difference ``b - a`` on every summary metric, the largest
in size first. Several (a benchmark): each item's spread, best minus worst system, on the ranking
metric, the largest first. A row opens on every system's answer and scores. The table has the
shape :mod:`synth.report._evaluation_rows` describes; ``#`` is the place in that order, so the
table shows the most disputed items first until another column is sorted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from synth.evaluate.report import Evaluation, ItemResult
from synth.report._evaluation_rows import fmt, summary_metrics
from synth.report._rows import number

_FIRST = [
    {"key": "index", "label": "#", "type": "number"},
    {"key": "id", "label": "id", "type": "text"},
    {"key": "input", "label": "input", "type": "text"},
]


def paired_items(
    a: Evaluation, b: Evaluation, names: tuple[str, str], metrics: Sequence[str] | None = None
) -> dict[str, Any]:
    """The items of both reports (paired by id), the largest ``|b - a|`` over ``metrics``
    (default: the summary metrics both have) first."""
    if metrics is None:
        metrics = [m for m in summary_metrics(a) if m in b.metrics]
    by_id = {item.id: item for item in b.items}
    entries = []
    for x in a.items:
        y = by_id.get(x.id)
        if y is None:
            continue
        deltas = [_delta(x, y, metric) for metric in metrics]
        sizes = [abs(d) for d in deltas if d is not None]
        entries.append((max(sizes) if sizes else None, [x.id, x.question, None, *deltas], (x, y)))
    columns = [
        *_FIRST,
        {"key": "largest", "label": "largest |\u0394|", "type": "number"},
        *({"key": f"delta:{m}", "label": f"\u0394 {m}", "type": "number"} for m in metrics),
    ]
    shown = list(metrics)
    return _table(columns, entries, lambda pair: _side_by_side(pair, names, shown))


def spread_items(reports: Mapping[str, Evaluation], metric: str) -> dict[str, Any]:
    """Every item of the first report with each system's ``metric`` score, the largest spread
    (best minus worst system) first."""
    names = list(reports)
    by_id = [{item.id: item for item in report.items} for report in reports.values()]
    first = next(iter(reports.values()), None)
    entries = []
    for item in first.items if first is not None else []:
        found = [index.get(item.id) for index in by_id]
        scores = [number(other.scores.get(metric)) if other else None for other in found]
        defined = [s for s in scores if s is not None]
        spread = max(defined) - min(defined) if len(defined) > 1 else None
        entries.append((spread, [item.id, item.question, None, *scores], found))
    columns = [
        *_FIRST,
        {"key": "spread", "label": f"spread of {metric}", "type": "number"},
        *({"key": f"system:{i}", "label": name, "type": "number"} for i, name in enumerate(names)),
    ]
    metrics = summary_metrics(first) if first is not None else []
    return _table(columns, entries, lambda found: _systems(found, names, metrics))


def _table(columns: list[dict[str, str]], entries: list[Any], details: Any) -> dict[str, Any]:
    """Rows most disputed first (an unknown size last, ties in the reports' order)."""
    entries.sort(key=lambda e: (e[0] is None, -(e[0] or 0.0)))
    rows, detail_rows = [], []
    for rank, (size, values, found) in enumerate(entries):
        values[2] = size
        rows.append([rank, *values])
        detail_rows.append(details(found))
    return {
        "columns": columns,
        "rows": rows,
        "details": detail_rows,
        "search": ["id", "input"],
        "filters": [],
    }


def _delta(x: ItemResult, y: ItemResult, metric: str) -> float | None:
    low, high = number(x.scores.get(metric)), number(y.scores.get(metric))
    return None if low is None or high is None else high - low


def _side_by_side(
    pair: tuple[ItemResult, ItemResult], names: tuple[str, str], metrics: Sequence[str]
) -> list[list[str]]:
    x, y = pair
    entries = [[f"{name}: answer", _answer(item)] for name, item in zip(names, pair, strict=True)]
    entries += [
        [m, f"{names[0]} {fmt(number(x.scores.get(m)))}, {names[1]} {fmt(number(y.scores.get(m)))}"]
        for m in metrics
    ]
    return entries + _references(x)


def _systems(
    found: Sequence[ItemResult | None], names: Sequence[str], metrics: Sequence[str]
) -> list[list[str]]:
    entries = []
    for name, item in zip(names, found, strict=True):
        if item is None:
            entries.append([name, "not in this system's report"])
            continue
        scores = ", ".join(f"{m} {fmt(number(item.scores.get(m)))}" for m in metrics)
        entries.append([name, f"{_answer(item)}\n{scores}"])
    present = next((item for item in found if item is not None), None)
    return entries + (_references(present) if present is not None else [])


def _answer(item: ItemResult) -> str:
    if "system" in item.errors:
        return f"failed: {item.errors['system']}"
    return item.answer if item.answer is not None else "(no answer)"


def _references(item: ItemResult) -> list[list[str]]:
    return [["expected", reference] for reference in item.references]


__all__ = ["paired_items", "spread_items"]
