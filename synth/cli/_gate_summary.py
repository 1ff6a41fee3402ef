"""``synth gate``'s Markdown summary: the verdict, the per-metric table and the goldens that fell.

Written for GitHub's job summary (``$GITHUB_STEP_SUMMARY``, appended to as GitHub asks) or any
file (``--summary``). Questions are the dataset's text: each is put on one line with every
character Markdown or HTML would act on escaped, so no question can break the table, open a
link or inject markup.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from synth._markdown import escape
from synth.evaluate.gate import GateResult

#: the goldens listed under a failing metric, worst first
_LISTED = 10
#: what makes a line a heading, list, quote or rule when it starts one
_LEADING = re.compile(r"^(?:[#+=-]|\d+(?=[.)]))")


def md_text(value: str, limit: int = 120) -> str:
    """``value`` as inert Markdown on one line: no markup, no HTML, no table cell break."""
    flat = " ".join(value.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    flat = escape(flat)
    # "1." or "#" at the start of a cell or list item would still make a list or a heading
    return _LEADING.sub(_escape_leading, flat)


def _escape_leading(found: re.Match[str]) -> str:
    text = found.group(0)
    return text + "\\" if text[0].isdigit() else "\\" + text


def _score(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.3f}"


def _signed(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:+.3f}"


def summary_markdown(result: GateResult, *, dataset: str = "", baseline: str = "") -> str:
    """The summary of ``result`` as Markdown text."""
    mark = "passed ✅" if result.passed else "failed ❌"
    lines = [f"## synth gate: {mark}", ""]
    where = " of " + md_text(dataset) if dataset else ""
    against = " against " + md_text(baseline) if baseline else ""
    lines.append(
        f"{result.n_items} goldens{where}{against}, paired item by item; a metric fails when it "
        "is worse by more than its margin and its 95% interval is clear of zero."
    )
    lines += [
        "",
        "| metric | n | baseline | current | change | 95% CI | margin | verdict |",
        "|:--|--:|--:|--:|--:|--:|--:|:--|",
    ]
    for row in result.metrics:
        verdict = "**worse**" if row.worse else "ok"
        lines.append(
            f"| {md_text(row.metric)} | {row.n} | {_score(row.baseline)} | {_score(row.current)} "
            f"| {_signed(row.delta)} | [{_signed(row.ci_low)}, {_signed(row.ci_high)}] "
            f"| {row.margin:g} | {verdict} |"
        )
    lines += ["", f"**Verdict:** {md_text(result.verdict(), 1000)}"]
    if result.failed_items:
        lines += [
            "",
            f"**{result.failed_items} of {result.n_items} items failed** (their scores are left "
            "out of the comparison):",
            "",
        ]
        lines += [f"- {md_text(line, 300)}" for line in result.failures]
    for row in result.worse:
        fell = sorted(
            (i for i in result.items if i.metric == row.metric and i.worse),
            key=lambda i: i.current - i.baseline,
        )
        if not fell:
            continue
        lines += ["", f"### {md_text(row.metric)}: the goldens that fell most", ""]
        lines += ["| golden | question | baseline | current |", "|:--|:--|--:|--:|"]
        for item in fell[:_LISTED]:
            lines.append(
                f"| {md_text(item.id, 40)} | {md_text(item.question)} | {_score(item.baseline)} "
                f"| {_score(item.current)} |"
            )
        if len(fell) > _LISTED:
            lines += ["", f"and {len(fell) - _LISTED} more (the JUnit report lists every golden)"]
    return "\n".join(lines) + "\n"


def append_summary(path: str | Path, text: str) -> None:
    """Append ``text`` to ``path`` (a job summary file gathers every step's)."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)


__all__ = ["append_summary", "md_text", "summary_markdown"]
