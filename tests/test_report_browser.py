"""The dataset report as a person sees it, in Debian's chromium driven by Playwright.

Every request the page makes is routed: only the report's own ``file://`` URL is let through, any
other fails the test (the report must open with no network). A console error, an uncaught
exception or a dialog (an ``alert`` run from a golden's text) fails it too. The browser is
``/usr/bin/chromium`` (``make setup`` installs it): when it is missing these tests fail, they never
skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import report_data
from report_browser import Opened

from synth.report import dataset_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "dataset.html"
    html = dataset_report(report_data.dataset(), manifest=report_data.manifest())
    path.write_text(html, encoding="utf-8")
    return path


@pytest.fixture
def opened(browser: Any, report_file: Path) -> Iterator[Opened]:
    report = Opened(browser, report_file)
    yield report
    report.page.close()


def test_plots_are_drawn_and_nothing_leaves_the_page(opened: Opened, tmp_path: Path) -> None:
    page = opened.page
    opened.wait_for_plots()
    figures = page.locator("[data-figure]")
    names = [figures.nth(i).get_attribute("data-figure") for i in range(figures.count())]
    assert names == [
        "files",
        "evolutions",
        "styles",
        "difficulty",
        "languages",
        "grounding",
        "lengths",
        "scores",
    ]
    for i in range(figures.count()):
        figure = figures.nth(i)
        # a bar or histogram trace draws one path per bar: an empty plot has none
        bars = figure.locator(".barlayer .point path").count()
        assert bars > 0, figure.get_attribute("data-figure")
    page.screenshot(path=str(tmp_path / "report-dataset.png"), full_page=True)
    assert (tmp_path / "report-dataset.png").stat().st_size > 10_000
    opened.check_clean()


def test_header_and_stages_show_the_run(opened: Opened) -> None:
    header = opened.page.locator(".facts").inner_text()
    assert "feedc0ffee000001" in header
    assert "$0.1234" in header and "321" in header
    stages = opened.page.locator("#stages").inner_text()
    assert "low quality 10" in stages
    # the plain-code prose filter before the critic, the final input's check after the filter
    assert "dotted_leaders 4" in stages and "meta_reference 2" in stages
    opened.check_clean()


def test_table_pages_fifty_rows(opened: Opened) -> None:
    assert opened.column("index")[:3] == ["0", "1", "2"]
    assert len(opened.column("index")) == 50
    assert opened.info().startswith("rows 1\u201350 of 122")
    opened.page.click("#goldens button[data-page=next]")
    assert opened.column("index")[0] == "50"
    assert opened.info().startswith("rows 51\u2013100 of 122")
    opened.check_clean()


def test_sorting_reorders_the_rows(opened: Opened) -> None:
    header = opened.page.locator("#goldens th[data-key=grounding]")
    header.click()
    ascending = [float(v) for v in opened.column("grounding")]
    assert ascending == sorted(ascending) and ascending[0] == 0.0
    header.click()
    descending = [float(v) for v in opened.column("grounding")]
    assert descending == sorted(descending, reverse=True) and descending[0] == 1.0
    assert header.get_attribute("aria-sort") == "descending"
    opened.check_clean()


def test_filtering_keeps_the_matching_rows(opened: Opened) -> None:
    opened.page.fill("#goldens input[type=search]", "variant 3)")
    inputs = opened.column("input")
    assert inputs and all("variant 3)" in text for text in inputs)
    assert len(inputs) == len([i for i in range(120) if i % 11 == 3])
    opened.page.fill("#goldens input[type=search]", "")
    opened.page.select_option("#goldens select[data-filter=difficulty]", "hard")
    labels = opened.column("difficulty")
    assert labels and set(labels) == {"hard"} and len(labels) == 40
    assert "of 40 (122 in all)" in opened.info()
    opened.check_clean()


def test_a_row_opens_its_context_with_the_cited_spans_marked(opened: Opened) -> None:
    opened.page.fill("#goldens input[type=search]", "derate")
    assert opened.column("input") == ["When does the battery derate?"]
    opened.page.click("#goldens button.open")
    detail = opened.page.locator("#goldens tr.detail")
    marks = detail.locator("pre[data-chunk=emoji] mark").all_text_contents()
    assert marks == [report_data.EMOJI_QUOTE, "Keep it shaded"]
    assert detail.locator("pre[data-chunk=plain] mark").count() == 0
    assert detail.locator("pre[data-chunk=emoji]").text_content() == report_data.EMOJI_CHUNK
    opened.check_clean()


def test_markup_from_documents_and_models_is_shown_as_text(opened: Opened) -> None:
    page = opened.page
    page.fill("#goldens input[type=search]", "<script>")
    assert opened.column("input") == [report_data.XSS_INPUT]
    assert opened.column("expected") == [report_data.XSS_ANSWER]
    page.click("#goldens button.open")
    chunk = page.locator("#goldens tr.detail pre[data-chunk=xss]")
    assert chunk.text_content() == report_data.XSS_CONTEXT
    assert chunk.locator("mark").all_text_contents() == ["</table>"]
    assert "<img src=x onerror=alert(5)>" in page.locator(".facts").inner_text()
    assert "</table><script>alert(6)</script>" in page.locator("#stages").inner_text()
    # nothing from the data became an element: the page's own tables (stages, diversity,
    # goldens) and no image
    assert page.locator("img").count() == 0
    assert page.locator("table").count() == 3
    assert page.locator("table.stages").count() == 2
    # data, plotly.js held as text, the two scripts, and plotly.js run from the text
    assert page.evaluate("document.querySelectorAll('script').length") == 5
    opened.check_clean()
