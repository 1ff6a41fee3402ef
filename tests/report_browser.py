"""What the browser tests of every report share: chromium driven by Playwright, and a report
open in a page that records every request (only the page's own file is let through), console
error, uncaught exception and dialog (an ``alert`` run from a document's or a model's text).
The ``browser`` fixture (one chromium per test module) is in conftest.py.

The browser is ``/usr/bin/chromium`` (``make setup`` installs it): when it is missing these tests
fail, they never skip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"


class Opened:
    """The report open in a page, and what went wrong while it was: requests, errors, dialogs.

    ``table`` is the id of the paged table that :meth:`column` and :meth:`info` read (and whose
    first rows are waited for), or None for a page without one."""

    def __init__(self, browser: Any, path: Path, table: str | None = "goldens") -> None:
        self.table = table
        self.url = path.as_uri()
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.route("**/*", self._route)
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dialog)
        self.page.goto(self.url)
        if table is not None:  # the first page of rows is drawn
            self.page.wait_for_selector(f"#{table} tbody tr")

    def _route(self, route: Any) -> None:
        if route.request.url == self.url:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def column(self, key: str) -> list[str]:
        return self.page.locator(
            f'#{self.table} tbody tr[data-row] td[data-key="{key}"]'
        ).all_inner_texts()

    def info(self) -> str:
        return self.page.locator(f"#{self.table} .info").inner_text()

    def wait_for_plots(self) -> None:
        """Until plotly.js has run and drawn every plot of the page."""
        self.page.wait_for_function(
            "[...document.querySelectorAll('[data-figure]')]"
            ".every(el => el.querySelector('.main-svg'))"
        )

    def check_clean(self) -> None:
        assert self.blocked == []
        assert self.errors == []
        assert self.dialogs == []


__all__ = ["CHROMIUM", "Opened"]
