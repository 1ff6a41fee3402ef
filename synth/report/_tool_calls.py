"""The calls side by side: each golden's expected tool calls next to the calls a system made.

The evaluation report of ``synth evaluate --tool-calls`` (:func:`tool_calls_page`) shows every
golden's calls in a two-sided table, a row per call: the expected one on the left, the one made
for it on the right, and what differs (another tool, arguments that differ, a call missing or one
too many). A call made is set beside the expected call of the same tool it follows in order (the
first of that name not yet paired), so a call made out of order still stands beside its twin;
what is left over on either side stands alone. The dataset report shows each golden's expected
calls with :func:`call_text`.

Every name, argument and request comes from a model or a user: the page gets them through jinja2
with autoescape on, never as markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synth.data import ToolCall
from synth.evaluate.tools import ToolCallEvaluation, ToolScore
from synth.report import _figures
from synth.report._evaluation_rows import fmt
from synth.report._html import render

SAME = "same"
OTHER_TOOL = "other tool"
ARGUMENTS = "arguments differ"
MISSING = "not made"
EXTRA = "not expected"


@dataclass(frozen=True)
class CallPair:
    """One row of a golden's table: the expected call and the call made beside it (either may be
    None), what differs (:data:`SAME` when nothing does) and the arguments that differ."""

    expected: ToolCall | None
    made: ToolCall | None
    verdict: str
    differing: tuple[str, ...] = ()

    @property
    def matches(self) -> bool:
        """Whether the two calls are the same (name and arguments)."""
        return self.verdict == SAME


def call_text(call: ToolCall) -> str:
    """A call as one line a person reads: ``name {"argument": value, ...}``."""
    arguments = json.dumps(call.input_parameters, ensure_ascii=False, sort_keys=True, default=str)
    return f"{call.name} {arguments}"


def differing_arguments(expected: Mapping[str, Any], made: Mapping[str, Any]) -> tuple[str, ...]:
    """The argument names whose values differ (given on one side only, or with another value)."""
    names = dict.fromkeys([*expected, *made])
    return tuple(
        str(name)
        for name in names
        if name not in expected or name not in made or expected[name] != made[name]
    )


def paired_calls(expected: Sequence[ToolCall], made: Sequence[ToolCall]) -> list[CallPair]:
    """The rows of a golden's table: each expected call beside the call made of its tool (in
    order), or beside the next call left when none was; then the calls made that are left."""
    left = list(range(len(made)))
    twins: list[int | None] = []
    for want in expected:  # first the calls of the same tool, in order
        twin = next((i for i in left if made[i].name == want.name), None)
        if twin is not None:
            left.remove(twin)
        twins.append(twin)
    for position, twin in enumerate(twins):  # then an expected call with none takes the next
        if twin is None and left:
            twins[position] = left.pop(0)
    rows: list[CallPair] = []
    for want, twin in zip(expected, twins, strict=True):
        if twin is None:
            rows.append(CallPair(want, None, MISSING))
            continue
        call = made[twin]
        if call.name != want.name:
            rows.append(CallPair(want, call, OTHER_TOOL))
            continue
        differ = differing_arguments(want.input_parameters, call.input_parameters)
        rows.append(CallPair(want, call, ARGUMENTS if differ else SAME, differ))
    rows += [CallPair(None, made[i], EXTRA) for i in left]
    return rows


def _golden_rows(report: ToolCallEvaluation) -> list[dict[str, Any]]:
    """Per golden: its request, kind, score, and its calls side by side."""
    goldens = []
    for index, item in enumerate(report.items):
        pairs = paired_calls(item.expected, item.called)
        goldens.append(
            {
                "index": index,
                "input": item.input,
                "kind": item.kind or "\u2014",
                "score": fmt(item.score),
                "matches": all(pair.matches for pair in pairs),
                "pairs": [
                    {
                        "expected": call_text(p.expected) if p.expected else None,
                        "made": call_text(p.made) if p.made else None,
                        "verdict": p.verdict
                        + (f": {', '.join(p.differing)}" if p.differing else ""),
                        "matches": p.matches,
                    }
                    for p in pairs
                ],
            }
        )
    return goldens


def _score_rows(scores: Mapping[str, ToolScore]) -> list[tuple[str, Any, Any, Any]]:
    return [(f"{name} ({s.n})", s.score, s.low, s.high) for name, s in scores.items()]


def tool_calls_page(
    report: ToolCallEvaluation, *, title: str | None = None, source: str | None = None
) -> str:
    """The HTML page of a tool call evaluation: the score with its interval, per kind and per
    tool, and every golden's calls side by side, mismatches marked."""
    overall = report.overall
    plots: dict[str, _figures.Figure] = {}
    for key, scores in (("kinds", report.per_kind), ("tools", report.per_tool)):
        if scores:
            plots[key] = _figures.intervals(
                f"tool correctness per {key[:-1]}: mean and 95% interval (goldens)",
                _score_rows(scores),
                x_title="score",
                x_range=(-0.02, 1.02),
            )
    goldens = _golden_rows(report)
    facts = [
        ("report", source),
        ("calls matched", report.match),
        ("arguments matched", report.arguments),
        ("goldens", str(overall.n)),
    ]
    return render(
        "tool_calls.html.j2",
        title=title or f"synth tool call report{f': {source}' if source else ''}",
        facts=[(label, value) for label, value in facts if value],
        numbers=[
            ("tool correctness", fmt(overall.score)),
            ("95% interval", f"{fmt(overall.low)}\u2013{fmt(overall.high)}"),
            ("goldens", str(overall.n)),
            ("with a mismatch", str(sum(not g["matches"] for g in goldens))),
        ],
        figures=list(plots),
        goldens=goldens,
        data={"figures": plots, "tables": {}},
    )


__all__ = [
    "ARGUMENTS",
    "EXTRA",
    "MISSING",
    "OTHER_TOOL",
    "SAME",
    "CallPair",
    "call_text",
    "differing_arguments",
    "paired_calls",
    "tool_calls_page",
]
