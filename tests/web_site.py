"""A small web site on 127.0.0.1 for the web-source tests and docs: a sitemap of pages, a
robots.txt, and HTTP validators (ETag, Last-Modified) answered with 304 when they match.

Each request is logged with its path and headers (``site.requests``) so a test can tell what a
crawl asked and how. Pages are HTML with navigation and a footer around an article.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROBOTS = "User-agent: *\nDisallow: /private/\n"
#: words the page bodies are made of (every page's article differs)
TOPICS = [
    "glaciers",
    "tides",
    "volcanoes",
    "deserts",
    "rainforests",
    "rivers",
    "caves",
    "reefs",
    "tundra",
    "savannas",
    "wetlands",
    "canyons",
    "fjords",
    "dunes",
    "lagoons",
    "plateaus",
    "geysers",
    "marshes",
    "atolls",
    "moors",
]


def page_html(title: str, body: str) -> str:
    """A page with navigation, an article and a footer."""
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body>"
        "<nav><a href='/'>Home</a> | <a href='/about'>About us</a> | MENU-NAVIGATION-LINKS</nav>"
        f"<main><article><h1>{title}</h1>{body}</article></main>"
        "<footer>FOOTER-COPYRIGHT all rights reserved</footer></body></html>"
    )


def article(topic: str, version: int = 1) -> str:
    """Three paragraphs about ``topic`` (``version`` changes their wording)."""
    return "".join(
        f"<p>Field notes on {topic}, revision {version}, paragraph {n}: the {topic} we surveyed "
        f"change with the seasons, and observers record how the {topic} respond to weather, "
        f"to water and to time over many years of careful study.</p>"
        for n in range(1, 4)
    )


@dataclass
class Logged:
    path: str
    headers: dict[str, str]
    status: int = 0


@dataclass
class Site:
    """The site's content (``pages``: path -> HTML) and its request log."""

    pages: dict[str, str] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    extra: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # path -> (type, body)
    requests: list[Logged] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    base: str = ""
    server: Any = None

    def url(self, path: str) -> str:
        return f"{self.base}{path}"

    def since(self, mark: int) -> list[Logged]:
        with self.lock:
            return list(self.requests[mark:])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def sitemap(site: Site, paths: list[str]) -> str:
    locs = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
    )


def start_site(pages: int = 20) -> Site:
    """A site of ``pages`` sitemap entries: page 5 is missing (404), page 7 moved (301), page 9
    is under /private/ (robots.txt disallows it); the others are articles. Call ``close()``."""
    site = Site()
    paths = []
    for n in range(1, pages + 1):
        topic = TOPICS[(n - 1) % len(TOPICS)]
        path = f"/private/page{n:02d}" if n == 9 else f"/docs/page{n:02d}"
        paths.append(path)
        if n == 5:
            continue  # 404
        if n == 7:
            site.redirects[path] = f"/docs/moved{n:02d}"
            path = f"/docs/moved{n:02d}"
        site.pages[path] = page_html(f"About {topic}", article(topic))
    handler = _handler(site, paths)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    site.server = server
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return site


def _handler(site: Site, paths: list[str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            entry = Logged(self.path, {k.lower(): v for k, v in self.headers.items()})
            with site.lock:
                site.requests.append(entry)
            if self.path == "/robots.txt":
                self._send(entry, 200, "text/plain", ROBOTS.encode())
            elif self.path == "/sitemap.xml":
                self._send(entry, 200, "application/xml", sitemap(site, paths).encode())
            elif self.path in site.redirects:
                entry.status = 301
                self.send_response(301)
                self.send_header("Location", site.redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif self.path in site.extra:
                kind, body = site.extra[self.path]
                self._send(entry, 200, kind, body)
            elif self.path in site.pages:
                self._send(entry, 200, "text/html; charset=utf-8", site.pages[self.path].encode())
            else:
                self._send(entry, 404, "text/html", b"<html><body>not found</body></html>")

        def _send(self, entry: Logged, status: int, kind: str, body: bytes) -> None:
            tag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            modified = formatdate(1_700_000_000 + len(body), usegmt=True)
            if status == 200 and (
                self.headers.get("If-None-Match") == tag
                or (
                    self.headers.get("If-None-Match") is None
                    and self.headers.get("If-Modified-Since") == modified
                )
            ):
                entry.status = 304
                self.send_response(304)
                self.send_header("ETag", tag)
                self.end_headers()
                return
            entry.status = status
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            if status == 200:
                self.send_header("ETag", tag)
                self.send_header("Last-Modified", modified)
            self.end_headers()
            self.wfile.write(body)

    return Handler


__all__ = ["Site", "article", "page_html", "start_site"]
