"""Web pages as sources: a sitemap read politely (robots.txt, a page cap, a size cap, one User-Agent),
every page statused, and a second crawl that asks only conditionally and re-reads changed pages.

The site is a real HTTP server on 127.0.0.1 (tests/web_site.py) logging each request's headers.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from web_site import Site, article, page_html, start_site

from synth.data import Golden
from synth.dataset._public import public_golden
from synth.ingest import load_documents
from synth.ingest.web import HostPacer, WebOptions, page_document
from synth.store import ingest_documents

FAST = WebOptions(rate=1000.0)


@pytest.fixture
def site() -> Iterator[Site]:
    served = start_site()
    yield served
    served.close()


def _by_path(report: object) -> dict[str, object]:
    return {f.path: f for f in report.files}  # type: ignore[attr-defined]


def _ingest(site: Site, store: Path) -> object:
    return ingest_documents([site.url("/sitemap.xml")], embedder="hash", store_path=store, web=FAST)


def test_a_sitemap_of_twenty_pages_gives_each_page_its_status(site: Site, tmp_path: Path) -> None:
    report = _ingest(site, tmp_path / "store")
    rows = _by_path(report)
    assert len(report.files) == 20  # type: ignore[attr-defined]
    missing = rows[site.url("/docs/page05")]
    assert (missing.status, missing.reason) == ("error", "HTTP 404 Not Found")
    private = rows[site.url("/private/page09")]
    assert (private.status, private.reason) == ("skipped", "disallowed by robots.txt")
    moved = rows[site.url("/docs/moved07")]  # named by where the redirect led, and it says so
    assert moved.status == "ok"
    assert moved.reason == f"redirected from {site.url('/docs/page07')}"
    assert site.url("/docs/page07") not in rows
    assert sum(f.status == "ok" for f in report.files) == 18  # type: ignore[attr-defined]
    asked = [entry.path for entry in site.requests]
    assert "/private/page09" not in asked  # robots.txt was read first and honoured
    assert asked[0] == "/robots.txt"
    assert all(e.headers["user-agent"].startswith("synth/") for e in site.requests)


def test_pages_lose_their_navigation_and_footer(site: Site, tmp_path: Path) -> None:
    loaded = load_documents([site.url("/docs/page01")], web=FAST)
    (document,) = loaded.documents
    assert document.path == site.url("/docs/page01")
    assert "glaciers we surveyed" in document.text
    assert "MENU-NAVIGATION" not in document.text
    assert "FOOTER-COPYRIGHT" not in document.text


def test_a_second_crawl_asks_conditionally_and_rereads_only_changed_pages(
    site: Site, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    first = _ingest(site, store)
    first_ids = {f.path: f.document_id for f in first.files}  # type: ignore[attr-defined]
    site.pages["/docs/page03"] = page_html("About tides", article("tides", version=2))
    mark = len(site.requests)

    second = _ingest(site, store)

    asked = site.since(mark)
    unconditional = [e.path for e in asked if "if-none-match" not in e.headers]
    assert unconditional == ["/docs/page05"]  # the 404 gave no validators: asked again as it was
    assert "/docs/page07" not in [e.path for e in asked]  # the 301 is remembered
    changed = site.url("/docs/page03")
    rows = _by_path(second)
    assert rows[changed].status == "ok" and not rows[changed].unchanged
    assert rows[changed].document_id != first_ids[changed]
    unchanged = [f.path for f in second.files if f.unchanged]  # type: ignore[attr-defined]
    assert len(unchanged) == 17 and changed not in unchanged
    assert {e.status for e in asked if e.path != "/docs/page05"} == {200, 304}
    assert [e.path for e in asked if e.status == 200] == ["/docs/page03"]
    assert second.embedded == rows[changed].chunks  # type: ignore[attr-defined]


def test_pages_over_the_cap_are_listed_not_fetched(site: Site, tmp_path: Path) -> None:
    loaded = load_documents([site.url("/sitemap.xml")], web=WebOptions(rate=1000.0, max_pages=3))
    over = [f for f in loaded.files if "page cap" in f.reason]
    assert len(loaded.files) == 20 and len(over) == 17
    asked = {e.path for e in site.requests}
    assert asked == {"/robots.txt", "/sitemap.xml", "/docs/page01", "/docs/page02", "/docs/page03"}


def test_urls_that_are_not_html_or_too_big_are_skipped_with_why(site: Site) -> None:
    site.extra["/files/report.pdf"] = ("application/pdf", b"%PDF-1.4 not a page")
    site.extra["/docs/huge"] = ("text/html", b"<html><body>" + b"x" * 5000 + b"</body></html>")
    urls = [site.url("/files/report.pdf"), site.url("/docs/huge"), site.url("/docs/page02")]
    loaded = load_documents(urls, web=WebOptions(rate=1000.0, max_bytes=4000))
    reasons = {f.path: (f.status, f.reason) for f in loaded.files}
    assert reasons[urls[0]] == ("skipped", "not HTML (application/pdf)")
    assert reasons[urls[1]][0] == "skipped" and reasons[urls[1]][1].startswith("too big")
    assert reasons[urls[2]] == ("ok", "")


def test_requests_to_one_host_are_spaced_by_the_rate() -> None:
    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    pacer = HostPacer(0.5, clock=lambda: now[0], sleep=sleep)
    pacer.wait("a.example")
    pacer.wait("b.example")  # another host: no wait
    now[0] += 0.2
    pacer.wait("a.example")
    pacer.set_delay("b.example", 3.0)  # its robots.txt asks a longer crawl delay
    pacer.wait("b.example")
    assert waits == [pytest.approx(0.3), pytest.approx(2.5)]


def test_a_page_with_no_main_text_is_an_error_line(site: Site) -> None:
    site.extra["/docs/empty"] = (
        "text/html",
        b"<html><head><title>t</title></head><body></body></html>",
    )
    loaded = load_documents([site.url("/docs/empty")], web=FAST)
    (row,) = loaded.files
    assert (row.status, row.reason) == ("error", "no main text found in the page")


def test_a_page_url_is_the_published_source_name() -> None:
    golden = Golden(
        input="q?",
        source_files=["https://user:secret@docs.example.com/guide/setup?v=2"],
    )
    assert public_golden(golden).source_files == ["https://docs.example.com/guide/setup?v=2"]


def test_page_document_is_the_html_seam() -> None:
    html = page_html("About caves", article("caves")).encode()
    document = page_document("https://example.com/caves", html)
    assert document.metadata["url"] == "https://example.com/caves"
    assert document.metadata["title"] == "About caves"
    assert "caves we surveyed" in document.text


def test_update_follows_a_changed_page_and_refetches_only_it(site: Site, tmp_path: Path) -> None:
    from synth import Synthesizer

    synth = Synthesizer("offline", embedder="hash", web=FAST, progress=False, cache=None)
    with synth:
        made = synth.generate_goldens_from_docs(site.url("/sitemap.xml"), num_goldens=4)
        made.save(tmp_path / "goldens.jsonl")
        changed = made[0].source_files[0]
        topic = changed.rsplit("page", 1)[1]
        site.pages[changed.removeprefix(site.base)] = page_html("Rewritten", article(topic, 9))
        mark = len(site.requests)
        updated = synth.update(tmp_path / "goldens.jsonl", [site.url("/sitemap.xml")])
    assert len(updated) == 4
    read_again = [e.path for e in site.since(mark) if e.status == 200]
    assert read_again == [changed.removeprefix(site.base)]
    retired = (tmp_path / "goldens.jsonl.retired.jsonl").read_text().splitlines()
    assert len(retired) == 1 and changed in retired[0]
