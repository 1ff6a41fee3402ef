"""The gate's Markdown summary, rendered as a CI page renders it and opened in Chromium: the table
has a row per metric with its numbers, the verdict is shown, and questions carrying markup stay
text (no link, image, script or broken table)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from report_browser import Opened

from synth.cli._gate_summary import summary_markdown
from synth.evaluate.gate import GateItem, GateScores, judge_gate

pytestmark = pytest.mark.browser

HOSTILE = [
    "<img src=x onerror=alert(1)> what | is it?",
    "[click](javascript:alert(2)) and **bold**",
    "# not a heading",
    "1. not a list <script>alert(3)</script>",
]


def scores(values: list[float], questions: list[str]) -> GateScores:
    items = [
        GateItem(id=f"g{n}", question=q, scores={"token_f1": v, "faithfulness": v})
        for n, (v, q) in enumerate(zip(values, questions, strict=True))
    ]
    return GateScores(
        dataset="d", n_items=len(items), metrics=["token_f1", "faithfulness"], items=items
    )


def render(tmp_path: Path, markdown: str) -> Path:
    # raw HTML on, as GitHub's renderer keeps some: the summary itself must hold none
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    page = tmp_path / "summary.html"
    page.write_text(f"<!doctype html><meta charset=utf-8><body>{html}</body>", encoding="utf-8")
    return page


@pytest.fixture
def failed_page(browser: Any, tmp_path: Path) -> Opened:
    questions = HOSTILE * 5 + [f"What is {n}?" for n in range(20)]
    base = scores([1.0] * 40, questions)
    # 22 fall (the evens, and 1 and 3): the first ten listed hold every hostile question
    now = scores([0.0 if n % 2 == 0 or n < 4 else 1.0 for n in range(40)], questions)
    result = judge_gate(base, now, margins={"token_f1": 0.1})
    markdown = summary_markdown(result, dataset="goldens.jsonl", baseline="baseline.json")
    opened = Opened(browser, render(tmp_path, markdown), table=None)
    yield opened
    opened.page.close()


def test_the_table_has_a_row_per_metric_and_the_verdict(failed_page: Opened) -> None:
    page = failed_page.page
    assert page.locator("h2").inner_text() == "synth gate: failed ❌"
    table = page.locator("table").first
    headers = table.locator("th").all_inner_texts()
    assert headers == [
        "metric",
        "n",
        "baseline",
        "current",
        "change",
        "95% CI",
        "margin",
        "verdict",
    ]
    rows = [r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all()]
    assert [r[0] for r in rows] == ["token_f1", "faithfulness"]
    assert rows[0][1:5] == ["40", "1.000", "0.450", "-0.550"] and rows[0][6:] == ["0.1", "worse"]
    assert rows[1][6] == "0"
    verdict = page.locator("p", has_text="Verdict:").inner_text()
    assert verdict.startswith("Verdict: gate failed: token_f1 is worse by 0.550")
    failed_page.check_clean()


def test_questions_with_markup_stay_text(failed_page: Opened) -> None:
    page = failed_page.page
    assert page.locator("img, script, a").count() == 0
    assert page.locator("h1").count() == 0 and page.locator("ol").count() == 0
    fell = page.locator("table").nth(1)
    cells = fell.locator("tbody td:nth-child(2)").all_inner_texts()
    assert "<img src=x onerror=alert(1)> what | is it?" in cells
    assert set(HOSTILE) <= set(cells)
    assert all(len(r.locator("td").all()) == 4 for r in fell.locator("tbody tr").all())
    failed_page.check_clean()


def test_a_passing_gate_renders_its_verdict(browser: Any, tmp_path: Path) -> None:
    base = scores([1.0, math.nan, 0.5], ["a", "b", "c"])
    result = judge_gate(base, base)
    opened = Opened(browser, render(tmp_path, summary_markdown(result)), table=None)
    assert opened.page.locator("h2").inner_text() == "synth gate: passed ✅"
    rows = opened.page.locator("table tbody tr").all()
    assert [r.locator("td").first.inner_text() for r in rows] == ["token_f1", "faithfulness"]
    assert opened.page.locator("table").count() == 1  # nothing fell: no list of goldens
    opened.check_clean()
    opened.page.close()
