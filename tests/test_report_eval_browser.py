"""The evaluation, comparison and benchmark reports as a person sees them, in Debian's chromium.

As for the dataset report (tests/test_report_browser.py): every request but the page's own file
fails the test, and so does a console error, an uncaught exception or a dialog (an ``alert`` run
from an answer's, a judge's or a system's text). Each page's screenshot is saved in the test's
temporary folder (``report-<kind>.png``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import eval_report_data as data
import pytest
from report_browser import Opened

from synth.report import benchmark_report, comparison_report, evaluation_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("reports")
    comparison, a, b = data.comparison()
    html = {
        "evaluation": evaluation_report(data.answers()),
        "retrieval": evaluation_report(data.retrieval()),
        "preference": evaluation_report(data.preference()),
        "comparison": comparison_report(comparison, reports=(a, b), names=("sloppy", "good")),
        "comparison-alone": comparison_report(comparison),
        "benchmark": benchmark_report(data.board()),
    }
    paths = {kind: folder / f"{kind}.html" for kind in html}
    for kind, page in html.items():
        paths[kind].write_text(page, encoding="utf-8")
    return paths


@pytest.fixture
def open_page(browser: Any, pages: dict[str, Path]) -> Iterator[Any]:
    opened: list[Opened] = []

    def open_(kind: str, table: str | None = "items") -> Opened:
        opened.append(Opened(browser, pages[kind], table=table))
        return opened[-1]

    yield open_
    for page in opened:
        page.page.close()


@pytest.mark.parametrize(
    ("kind", "plots"),
    [
        ("evaluation", 6),  # the means, four score distributions, the judges' agreement
        ("retrieval", 11),
        ("preference", 4),
        ("comparison", 2),
        ("comparison-alone", 2),
        ("benchmark", 3),
    ],
)
def test_every_plot_is_drawn_and_nothing_leaves_the_page(
    open_page: Any, kind: str, plots: int, tmp_path: Path
) -> None:
    report = open_page(kind, table=None)
    report.wait_for_plots()
    figures = report.page.locator("[data-figure]")
    assert figures.count() == plots
    for i in range(figures.count()):
        # a bar, a histogram bin or a dot with its interval: one .point each; an empty plot has none
        assert figures.nth(i).locator(".point").count() > 0, figures.nth(i).get_attribute(
            "data-figure"
        )
    report.page.screenshot(path=str(tmp_path / f"report-{kind}.png"), full_page=True)
    assert (tmp_path / f"report-{kind}.png").stat().st_size > 10_000
    report.check_clean()


# ---- the evaluation report ---------------------------------------------------------------------
def test_the_items_sort_filter_and_page(open_page: Any) -> None:
    report = open_page("evaluation")
    assert report.info().startswith("rows 1\u201350 of 120")
    header = report.page.locator('#items th[data-key="score:token_f1"]')
    header.click()
    ascending = [float(v) for v in report.column("score:token_f1") if v != "\u2014"]
    assert ascending == sorted(ascending) and ascending[0] < ascending[-1]
    header.click()
    descending = [float(v) for v in report.column("score:token_f1")]
    assert descending == sorted(descending, reverse=True) and descending[0] == 1.0
    report.page.fill("#items input[type=search]", "variant 3)")
    inputs = report.column("input")
    assert inputs and all("variant 3)" in text for text in inputs)
    report.page.fill("#items input[type=search]", "")
    report.page.select_option("#items select[data-filter=status]", "failed")
    assert report.column("id") == ["item-004", "item-013"]
    report.check_clean()


def test_a_row_opens_on_each_judges_reasons(open_page: Any) -> None:
    report = open_page("evaluation")
    report.page.fill("#items input[type=search]", "Question 2:")
    report.page.click("#items button.open")
    detail = report.page.locator("#items tr.detail").inner_text()
    assert "answer_relevance/strict" in detail and "too vague" in detail
    assert "index: 1, evidence: , reason: scripted, supported: False" in detail
    failures = report.page.locator("#failures").inner_text()
    assert "RuntimeError: the retriever timed out <b>badly</b>" in failures
    report.check_clean()


def test_answers_and_reasons_with_markup_are_shown_as_text(open_page: Any) -> None:
    report = open_page("evaluation")
    page = report.page
    page.fill("#items input[type=search]", "</table>")
    assert report.column("input") == [data.XSS_QUESTION]
    assert report.column("answer") == [data.XSS_ANSWER]
    page.click("#items button.open")
    assert data.XSS_REASON in page.locator("#items tr.detail").inner_text()
    # nothing from the data became an element: the page's own tables, no image, no bold
    assert page.locator("img").count() == 0 and page.locator("main b").count() == 0
    assert page.locator("table").count() == 4  # judges, failures, not scored, items
    report.check_clean()


# ---- the comparison and benchmark reports -------------------------------------------------------
def test_a_comparison_lists_the_items_the_two_disagree_on_most(open_page: Any) -> None:
    report = open_page("comparison")
    largest = [float(v) for v in report.column("largest")]
    assert largest == sorted(largest, reverse=True) and largest[0] == 1.0
    header = report.page.locator('#items th[data-key="delta:token_f1"]')
    header.click()
    deltas = [float(v) for v in report.column("delta:token_f1")]
    assert deltas == sorted(deltas) and deltas != sorted(deltas, reverse=True)
    report.page.fill("#items input[type=search]", "hostile")
    report.page.click("#items button.open")
    detail = report.page.locator("#items tr.detail").inner_text()
    assert f"sloppy: answer\n{data.XSS_ANSWER}" in detail
    text = report.page.locator("#metrics-table").inner_text()
    assert "delta (good \u2212 sloppy)" in text and "(MC)" in text
    report.check_clean()


def test_a_comparison_alone_says_how_to_list_the_items(open_page: Any) -> None:
    report = open_page("comparison-alone", table=None)
    assert "--reports A B" in report.page.locator("#items-section").inner_text()
    assert report.page.locator("[data-table]").count() == 0
    report.check_clean()


def test_a_benchmark_ranks_the_systems_and_shows_their_names_as_text(open_page: Any) -> None:
    report = open_page("benchmark")
    report.wait_for_plots()
    ticks = report.page.locator("[data-figure=leaderboard] .ytick text").all_text_contents()
    assert sorted(ticks) == ["1. good", "2. sloppy", "3. <i>echo</i>"]  # drawn bottom up
    spread = [float(v) for v in report.column("spread")]
    assert spread == sorted(spread, reverse=True) and spread[0] > 0
    report.page.locator('#items th[data-key="system:1"]').click()  # sloppy, lowest first
    sloppy = [float(v) for v in report.column("system:1")]
    assert sloppy == sorted(sloppy)
    assert report.page.locator("i").count() == 0
    report.check_clean()
