"""The evaluation report: :func:`evaluation_report`, one self-contained HTML page about a report
that ``synth evaluate`` wrote (answers, retrieval or preference; a tool call evaluation's page,
the calls side by side, is :mod:`synth.report._tool_calls`'s).

Every metric's mean with its bootstrap interval, the distribution of the per-item scores, the
judges (usage, agreement between the panel's judges, a preference's wins), the failures with their
reasons, and every item in a table that sorts, filters and pages, each row opening on its scores
with what each judge said.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from synth.evaluate.report import Evaluation, PreferenceEvaluation, read_report
from synth.evaluate.tools import ToolCallEvaluation
from synth.report import _figures
from synth.report._evaluation_rows import failure_table, fmt, item_table, summary_metrics
from synth.report._html import given, page_name, render
from synth.report._kinds import read_tool_calls
from synth.report._rows import number
from synth.report._tool_calls import tool_calls_page


def evaluation_report(
    report: Evaluation | ToolCallEvaluation | str | os.PathLike[str],
    *,
    title: str | None = None,
    source: str | os.PathLike[str] | None = None,
) -> str:
    """The HTML page reporting on ``report`` (an :class:`~synth.Evaluation`, a tool call
    evaluation, or the file of either): for tool calls, each golden's expected calls beside the
    calls the system made, mismatches marked.

    ``source`` names the report's file when ``report`` is already read (default: ``report``
    itself when it is a path). Write the page with
    ``Path("eval.html").write_text(html, encoding="utf-8")``.
    """
    if not isinstance(report, Evaluation | ToolCallEvaluation):
        calls = read_tool_calls(report)
        if calls is not None:
            return tool_calls_page(calls, title=title, source=page_name(source or report))
    elif isinstance(report, ToolCallEvaluation):
        return tool_calls_page(report, title=title, source=page_name(source))
    data, name = given(report, Evaluation, read_report, source)
    plots = _plots(data)
    return render(
        "evaluation.html.j2",
        title=title or f"synth {data.kind} report{f': {name}' if name else ''}",
        facts=_facts(data, name),
        numbers=_numbers(data),
        judges=judge_rows(data),
        failures=_failure_counts(data),
        skipped=_skipped(data),
        figures=list(plots),
        data={
            "figures": plots,
            "tables": {"items": item_table(data), "failures": failure_table(data)},
        },
    )


# ---- the header --------------------------------------------------------------------------------
def _facts(report: Evaluation, source: str | None) -> list[tuple[str, str]]:
    config = report.config
    facts: list[tuple[str, Any]] = [
        ("report", source),
        ("kind", report.kind),
        ("system", config.get("system")),
        ("items", len(report.items)),
        ("judges", ", ".join(getattr(report, "judges", {}))),
        ("k", ", ".join(str(k) for k in getattr(report, "k", []))),
        ("answers", " vs ".join(getattr(report, "names", ()))),
        ("seed", config.get("seed")),
    ]
    return [(label, str(value)) for label, value in facts if value not in (None, "")]


def _numbers(report: Evaluation) -> list[tuple[str, str]]:
    numbers = [("items", str(len(report.items))), ("failed items", str(report.failed_items))]
    numbers += [(metric, fmt(report.metrics[metric])) for metric in summary_metrics(report)[:6]]
    return numbers


def judge_rows(report: Evaluation) -> list[list[str]]:
    """One row per judge: name, model, replies, cached, tokens in and out, errors."""
    usage: dict[str, dict[str, int]] = getattr(report, "usage", {})
    errors: dict[str, int] = getattr(report, "errors", {})
    rows = []
    for name, identity in getattr(report, "judges", {}).items():
        counts = usage.get(name, {})
        model = ":".join(str(identity[k]) for k in ("provider", "model") if identity.get(k))
        rows.append(
            [
                name,
                model,
                *(
                    str(counts.get(k, 0))
                    for k in ("responses", "cached_responses", "input_tokens", "output_tokens")
                ),
                str(errors.get(name, 0)),
            ]
        )
    return rows


def _failure_counts(report: Evaluation) -> list[tuple[str, int]]:
    counts = Counter(source for item in report.items for source in item.errors)
    return counts.most_common()


def _skipped(report: Evaluation) -> list[tuple[str, str, int]]:
    """(metric, reason, items): the scores left out for lack of an input, which cost no call."""
    counts = Counter((m, why) for item in report.items for m, why in item.skipped.items())
    return [(metric, why, n) for (metric, why), n in counts.most_common()]


# ---- the plots ---------------------------------------------------------------------------------
def _plots(report: Evaluation) -> dict[str, _figures.Figure]:
    n = len(report.items)
    rows = [
        (f"{metric} ({report.coverage.get(metric, 0)}/{n})", *_mean_and_interval(report, metric))
        for metric in report.metrics
    ]
    unit = all(v is None or 0 <= v <= 1 for _, *values in rows for v in values)
    plots = {
        "metrics": _figures.intervals(
            "mean and 95% interval (items scored)",
            rows,
            x_title="score",
            x_range=(-0.02, 1.02) if unit else None,
        )
    }
    for number_, metric in enumerate(summary_metrics(report)):
        values = [v for item in report.items if (v := number(item.scores.get(metric))) is not None]
        plots[f"scores-{number_}"] = _figures.histogram(
            f"{metric}: per-item scores",
            {metric: values},
            x_title="score",
            y_title="items",
            unit_range=all(0 <= v <= 1 for v in values),
        )
    agreement: dict[str, float] = getattr(report, "agreement", {})
    if agreement:
        alphas = {metric: number(alpha) for metric, alpha in agreement.items()}
        plots["agreement"] = _figures.bars(
            "judge agreement (Krippendorff's alpha)", {"alpha": alphas}
        )
    if isinstance(report, PreferenceEvaluation):
        plots["preference"] = _preference(report)
    return plots


def _mean_and_interval(report: Evaluation, metric: str) -> tuple[Any, Any, Any]:
    low, high = report.intervals.get(metric, (None, None))
    return number(report.metrics.get(metric)), number(low), number(high)


def _preference(report: PreferenceEvaluation) -> _figures.Figure:
    a, b = report.names
    series: dict[str, dict[str, float]] = {f"{a} wins": {}, f"{b} wins": {}, "ties": {}}
    for judge, summary in report.summary.items():
        series[f"{a} wins"][judge] = summary["wins"].get(a, 0)
        series[f"{b} wins"][judge] = summary["wins"].get(b, 0)
        series["ties"][judge] = summary["ties"]
    return _figures.bars(f"{a} vs {b}: verdicts by judge", series)


__all__ = ["evaluation_report", "judge_rows"]
