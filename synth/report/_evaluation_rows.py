"""The evaluation report's tables: every item with its scores and what each judge said, and every
failure with its reason.

A table is the data :func:`pagedTable` (``templates/report.js``) draws: ``columns``, ``rows`` (arrays
in the order of the columns, the first value the row's index), ``search`` and ``filters`` (column
keys), and ``details`` (per row, ``[label, text]`` pairs shown when the row is opened).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from synth.evaluate.report import Evaluation, ItemResult, RetrievalEvaluation
from synth.report._rows import number

#: the key of a score's column: prefixed, so that a metric named "input" is no other column
SCORE_KEY = "score:{}"


def summary_metrics(report: Evaluation) -> list[str]:
    """The metrics a reader compares: text metrics and panel scores, not each judge's own."""
    return [metric for metric in report.metrics if "/" not in metric]


def item_table(report: Evaluation) -> dict[str, Any]:
    """Every item: id, input, answer, expected, one column per summary metric, ok or failed."""
    metrics = summary_metrics(report)
    retrieval = isinstance(report, RetrievalEvaluation)
    answer, expected = ("retrieved", "relevant") if retrieval else ("answer", "expected")
    columns = [
        {"key": "index", "label": "#", "type": "number"},
        {"key": "id", "label": "id", "type": "text"},
        {"key": "input", "label": "input", "type": "text"},
        {"key": "answer", "label": answer, "type": "text"},
        {"key": "expected", "label": expected, "type": "text"},
        *({"key": SCORE_KEY.format(m), "label": m, "type": "number"} for m in metrics),
        {"key": "status", "label": "status", "type": "text"},
    ]
    rows = []
    for index, item in enumerate(report.items):
        shown: list[str | None]
        if retrieval:
            shown = [", ".join(item.retrieved), ", ".join(item.relevant)]
        else:
            shown = [item.answer, " | ".join(item.references)]
        rows.append(
            [
                index,
                item.id,
                item.question,
                *shown,
                *(number(item.scores.get(m)) for m in metrics),
                "failed" if item.errors else "ok",
            ]
        )
    return {
        "columns": columns,
        "rows": rows,
        "details": [item_details(item) for item in report.items],
        "search": ["id", "input", "answer", "expected"],
        "filters": ["status"],
    }


def item_details(item: ItemResult) -> list[list[str]]:
    """``[label, text]`` for every score of ``item`` (with the judge's verdict, the failure or
    why it was not scored), then the failures and skips that have no score of their own."""
    entries = []
    for metric, score in item.scores.items():
        lines = [fmt(score)]
        if metric in item.verdicts:
            lines.append(verdict_text(item.verdicts[metric]))
        if metric in item.errors:
            lines.append(f"failed: {item.errors[metric]}")
        if metric in item.skipped:
            lines.append(f"not scored: {item.skipped[metric]}")
        entries.append([metric, "\n".join(lines)])
    entries += [[f"failed: {k}", v] for k, v in item.errors.items() if k not in item.scores]
    entries += [[k, f"not scored: {v}"] for k, v in item.skipped.items() if k not in item.scores]
    if len(item.references) > 1:
        entries += [[f"expected {i}", ref] for i, ref in enumerate(item.references, start=1)]
    return entries


def failure_table(report: Evaluation) -> dict[str, Any]:
    """One row per failure: the item, what failed (``system`` or ``metric/judge``) and why."""
    rows: list[list[Any]] = []
    for item in report.items:
        for source, reason in item.errors.items():
            rows.append([len(rows), item.id, item.question, source, reason])
    columns = [
        {"key": "index", "label": "#", "type": "number"},
        {"key": "id", "label": "item", "type": "text"},
        {"key": "input", "label": "input", "type": "text"},
        {"key": "source", "label": "what failed", "type": "text"},
        {"key": "reason", "label": "reason", "type": "text"},
    ]
    return {
        "columns": columns,
        "rows": rows,
        "search": ["id", "input", "reason"],
        "filters": ["source"],
    }


def verdict_text(verdict: Mapping[str, Any], indent: str = "") -> str:
    """A judge's verdict as lines a person reads: ``reason: ...``, one line per claim, etc."""
    lines = []
    for key, value in verdict.items():
        label = key.replace("_", " ")
        if isinstance(value, Mapping):
            lines.append(f"{indent}{label}:")
            lines.append(verdict_text(value, indent + "  "))
        elif isinstance(value, list):
            lines.append(f"{indent}{label}:")
            lines += [f"{indent}  - {_entry(entry)}" for entry in value]
        else:
            lines.append(f"{indent}{label}: {value}")
    return "\n".join(lines)


def _entry(entry: object) -> str:
    if isinstance(entry, Mapping):
        return ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in entry.items())
    return str(entry)


def fmt(value: float | None, digits: int = 3) -> str:
    """``value`` rounded for the page, or an em dash when it is missing or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2014"
    return f"{value:.{digits}f}"


__all__ = [
    "SCORE_KEY",
    "failure_table",
    "fmt",
    "item_details",
    "item_table",
    "summary_metrics",
    "verdict_text",
]
