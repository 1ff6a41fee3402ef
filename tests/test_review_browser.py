"""``synth review`` as a reviewer uses it: a real server process, Debian's chromium via Playwright.

Every request the page makes is routed: only the review server's own origin is let through, any
other fails the test (no remote assets). A console error, an uncaught exception or a dialog (an
``alert`` run from a golden's text) fails it too. Decisions are checked where they matter: in the
dataset file, and in the page after a reload or a restart of the server.
"""

from __future__ import annotations

import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import report_data
from review_server import ReviewProcess, reviewing

from synth import Dataset
from synth.dataset.review import status_of

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
COUNT = 30  # ordinary goldens; then the emoji one (index 30) and the hostile one (index 31)
#: where the docs' screenshot is written when this is set (``make docs-screenshot`` style)
SCREENSHOT_ENV = "SYNTH_REVIEW_SCREENSHOT"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture
def dataset_file(tmp_path: Path) -> Path:
    dataset = report_data.dataset(COUNT)
    dataset.goldens[0].metadata["styling"] = {"scenario": "an installer on site", "format": None}
    return dataset.save(tmp_path / "goldens.jsonl")


@pytest.fixture
def server(dataset_file: Path) -> Iterator[ReviewProcess]:
    with reviewing(dataset_file, "--reviewer", "tester") as process:
        yield process


class Review:
    """The review page open in a tab, and what went wrong while it was: requests, errors, dialogs."""

    def __init__(self, browser: Any, server: ReviewProcess) -> None:
        self.server = server
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1360, "height": 900})
        self.page.set_default_timeout(15_000)
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.open()

    def open(self) -> None:
        self.page.goto(self.server.url)
        self.page.wait_for_selector("#list li[data-index]")

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.server.origin + "/"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def press(self, *keys: str) -> None:
        for key in keys:
            self.page.keyboard.press(key)

    def wait_status(self, index: int, status: str) -> None:
        self.page.wait_for_selector(f'#list li[data-index="{index}"][data-status="{status}"]')

    def shown(self) -> int:
        return int(self.page.locator("#golden").get_attribute("data-index"))

    def listed(self) -> list[int]:
        return [
            int(i)
            for i in self.page.locator("#list li").evaluate_all(
                "items => items.map(li => li.dataset.index)"
            )
        ]

    def check_clean(self) -> None:
        assert self.blocked == []
        assert self.errors == []
        assert self.dialogs == []


@pytest.fixture
def review(browser: Any, server: ReviewProcess) -> Iterator[Review]:
    opened = Review(browser, server)
    yield opened
    opened.page.close()


def _saved(path: Path) -> list[str]:
    return [status_of(golden) for golden in Dataset.load(path)]


def test_accept_reject_and_edit_with_the_keyboard_then_reload(
    review: Review, dataset_file: Path
) -> None:
    page = review.page
    assert review.shown() == 0 and page.locator("#status").inner_text() == "pending"
    review.press("a")
    review.wait_status(0, "accepted")
    assert review.shown() == 1  # on to the next golden
    review.press("r", "2")
    review.wait_status(1, "rejected")
    review.press("r")
    page.fill("#reason-text", "the answer names the wrong <b>unit</b>")
    page.keyboard.press("Enter")
    review.wait_status(2, "rejected")
    review.press("e")
    page.fill("#expected-box", "Exactly 4 kWh, <script>alert(9)</script> kept in reserve.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#expected-editor[hidden]", state="attached")
    review.wait_status(3, "accepted")  # an edit of a pending golden accepts it
    saved = Dataset.load(dataset_file)
    assert _saved(dataset_file)[:4] == ["accepted", "rejected", "rejected", "accepted"]
    assert saved[1].metadata["review"]["reason"] == "not answerable from context"
    assert saved[2].metadata["review"]["reason"] == "the answer names the wrong <b>unit</b>"
    assert saved[3].expected_output.startswith("Exactly 4 kWh")
    assert saved[3].metadata["review"]["original"] == {"expected_output": "It keeps 4 kWh."}
    assert saved[0].metadata["review"]["reviewer"] == "tester"
    assert page.locator("#progress-text").inner_text().startswith("4 of 32 reviewed")

    page.reload()
    page.wait_for_selector("#list li[data-index]")
    for index, status in enumerate(["accepted", "rejected", "rejected", "accepted"]):
        review.wait_status(index, status)
    page.click('#list li[data-index="3"] button')
    assert page.locator("#expected").inner_text().startswith("Exactly 4 kWh, <script>")
    assert "It keeps 4 kWh." in page.locator('[data-fact="original expected output"]').inner_text()
    review.press("u")
    review.wait_status(3, "pending")
    review.check_clean()


def test_filters_narrow_the_list(review: Review) -> None:
    page = review.page
    review.press("a")
    review.wait_status(0, "accepted")
    page.select_option("#filter-status", "accepted")
    assert review.listed() == [0] and review.shown() == 0
    page.select_option("#filter-status", "pending")
    assert 0 not in review.listed() and len(review.listed()) == COUNT + 1
    page.select_option("#filter-status", "all")
    page.select_option("#filter-difficulty", "hard")
    hard = review.listed()
    assert hard and all(i % 3 == 2 for i in hard if i < COUNT)
    page.select_option("#filter-difficulty", "")
    page.select_option("#filter-evolution", "hypothetical")
    assert review.listed() == [i for i in range(COUNT) if i % 3 == 1]
    page.select_option("#filter-file", "specs.docx")  # the specs are the "hard" thirds
    assert review.listed() == []
    assert page.locator("#list-info").inner_text().startswith("no golden matches")
    page.select_option("#filter-evolution", "")
    assert review.listed() == [i for i in range(COUNT) if i % 3 == 2]
    assert page.locator('[data-fact="file"]').inner_text().endswith("specs.docx")
    page.select_option("#filter-file", "")
    page.select_option("#filter-status", "pending")
    page.click('#list li[data-index="1"] button')
    review.press("a")  # accepting in the pending view moves on to the next pending golden
    page.wait_for_selector('#save-state:text-is("saved: #1 accepted")')
    assert review.shown() == 2 and 1 not in review.listed()
    review.check_clean()


def test_hostile_text_renders_as_text_and_the_cited_span_is_marked(review: Review) -> None:
    page = review.page
    page.click('#list li[data-index="31"] button')
    assert page.locator("#input").inner_text() == report_data.XSS_INPUT
    assert page.locator("#expected").inner_text() == report_data.XSS_ANSWER
    chunk = page.locator("#context pre[data-chunk=xss]")
    assert chunk.inner_text() == report_data.XSS_CONTEXT
    assert chunk.locator("mark").inner_text() == "</table>"
    assert page.locator("#context img, #golden b, #golden i").count() == 0
    page.click('#list li[data-index="30"] button')
    marks = page.locator("#context pre[data-chunk=emoji] mark").all_inner_texts()
    assert marks == [report_data.EMOJI_QUOTE, "Keep it shaded"]
    assert "manual.pdf" in page.locator('[data-fact="file"]').inner_text()
    page.click('#list li[data-index="0"] button')
    assert "scenario: an installer on site" in page.locator('[data-fact="styling"]').inner_text()
    assert page.locator('[data-fact="page"]').inner_text().endswith("1")
    review.check_clean()


def test_the_page_and_the_api_refuse_a_request_without_the_token(
    review: Review, server: ReviewProcess
) -> None:
    answer = review.page.goto(server.origin + "/")
    assert answer.status == 403 and "session token" in review.page.inner_text("body")
    request = urllib.request.Request(
        server.origin + "/api/decide",
        data=b'{"key": "x", "status": "accepted"}',
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    refused.value.close()  # the refusal holds the connection open until it is closed
    assert refused.value.code == 403
    # a page of another origin cannot use the token-less API either: fetch from about:blank
    review.page.goto(server.url)
    review.page.wait_for_selector("#list li[data-index]")
    status = review.page.evaluate(
        """async () => (await fetch('/api/decide', {method: 'POST',
             headers: {'Content-Type': 'application/json'},
             body: JSON.stringify({key: 'x', status: 'accepted'})})).status"""
    )
    assert status == 403
    review.errors = [e for e in review.errors if "403" not in e]  # the refusals we asked for
    review.check_clean()


def test_sigkill_mid_review_loses_nothing(browser: Any, dataset_file: Path) -> None:
    with reviewing(dataset_file, "--reviewer", "tester") as first:
        tab = Review(browser, first)
        tab.press("a")
        tab.wait_status(0, "accepted")
        tab.press("r", "1")
        tab.wait_status(1, "rejected")
        first.proc.send_signal(signal.SIGKILL)
        first.proc.wait(timeout=30)
        tab.page.close()
    assert _saved(dataset_file)[:3] == ["accepted", "rejected", "pending"]
    with reviewing(dataset_file, "--reviewer", "tester") as second:
        assert "(2 reviewed)" in "".join(second.lines)
        tab = Review(browser, second)
        tab.wait_status(0, "accepted")
        tab.wait_status(1, "rejected")
        assert tab.page.locator("#progress-text").inner_text().startswith("2 of 32 reviewed")
        tab.check_clean()
        tab.page.close()


def test_screenshot_of_a_review_in_progress(review: Review, tmp_path: Path) -> None:
    page = review.page
    review.press("a")
    review.wait_status(0, "accepted")
    review.press("r", "3")
    review.wait_status(1, "rejected")
    review.press("a")
    review.wait_status(2, "accepted")
    page.click('#list li[data-index="1"] button')  # a rejected one: its reason and reviewer
    target = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "review.png")
    page.screenshot(path=str(target))
    assert target.stat().st_size > 10_000
    review.check_clean()
