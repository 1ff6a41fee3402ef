"""The reports of agent goldens in chromium (Playwright): a dataset row opens on its expected
calls, arguments and results shown as text; the tool call page draws its plots; neither runs
anything from the data nor reaches the network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from report_browser import Opened
from test_report_tool_calls import HOSTILE, goldens

from synth.evaluate.tools import evaluate_tool_calls
from synth.report import dataset_report, evaluation_report

pytestmark = pytest.mark.browser


def test_a_dataset_row_opens_on_its_expected_calls(browser: Any, tmp_path: Path) -> None:
    dataset = goldens()
    dataset.goldens[0].expected_tools[0].output = {"order_id": 7}  # type: ignore[index]
    path = tmp_path / "agent.html"
    path.write_text(dataset_report(dataset), encoding="utf-8")
    opened = Opened(browser, path)
    page = opened.page
    assert opened.column("calls") == ["find_order \u2192 refund_order", "store_hours", "none"]
    page.click('#goldens tr[data-row="0"] button.open')
    detail = page.locator("#goldens tr.detail")
    assert detail.locator("figcaption").first.text_content() == "call 1 of 2: find_order"
    assert '"order_id": 7' in detail.locator('pre[data-output="0"]').text_content()
    assert detail.locator('pre[data-output="1"]').count() == 0  # not run: no result
    page.click('#goldens tr[data-row="0"] button.open')
    page.click('#goldens tr[data-row="1"] button.open')
    assert HOSTILE in page.locator('#goldens tr.detail pre[data-call="0"]').text_content()
    page.click('#goldens tr[data-row="1"] button.open')
    page.click('#goldens tr[data-row="2"] button.open')
    assert "no tool call expected" in page.locator("#goldens tr.detail").inner_text()
    assert page.evaluate("document.querySelectorAll('main script').length") == 0
    opened.check_clean()
    page.close()


def test_the_tool_call_page_draws_its_plots_and_runs_nothing_from_the_data(
    browser: Any, tmp_path: Path
) -> None:
    def agent(question: str) -> list[dict[str, Any]]:
        return [{"name": "store_hours", "arguments": {"city": HOSTILE}}]

    path = tmp_path / "scores.html"
    path.write_text(evaluation_report(evaluate_tool_calls(goldens(), agent)), encoding="utf-8")
    opened = Opened(browser, path, table=None)
    opened.wait_for_plots()
    assert opened.page.locator("details.golden.mismatch").count() == 2
    assert HOSTILE in opened.page.locator('details[data-golden="1"]').inner_text()
    opened.check_clean()
    opened.page.close()
