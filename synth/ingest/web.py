"""Web pages as documents: URLs and sitemaps read politely, each page with a status like a file's.

A URL given where a file or folder goes is fetched; a sitemap (``<urlset>``, or a
``<sitemapindex>`` of sitemaps) stands for the pages it lists, any other answer is a page.
docs/sources.md has the rules of the crawl (robots.txt and its ``Crawl-delay``, one request at a
time per host spaced by ``1 / rate`` seconds, the page and size caps), each status and its
reasons, and the mirror folder (``web/`` in the store's folder) whose validators let a later crawl
ask only what changed: a page answered 304 keeps its mirror file, and the ingest's fingerprints
then reuse its stored chunks without reading it. A page's source name is its public URL, after
redirects, without user name or password. Reading the HTML is :func:`page_document`'s, the one
seam between fetching and the HTML reader.
"""

from __future__ import annotations

import gzip
import json
import logging
import time
import urllib.robotparser
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit, urlunsplit
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

from synth._files import write_atomic
from synth._ids import file_hash, text_hash
from synth._version import __version__
from synth.data import Document
from synth.errors import ConfigError, IngestError
from synth.ingest._util import one_line
from synth.ingest.report import FileStatus, LoadedFile

logger = logging.getLogger("synth.ingest")

#: the product token robots.txt rules name synth by
ROBOTS_AGENT = "synth"
USER_AGENT = f"synth/{__version__} (evaluation dataset generator; honours robots.txt)"
#: the mirror folder's name under the store's folder, and its state file
WEB_FOLDER = "web"
STATE_FILE = "crawl.json"
#: the suffix a page's mirror file (and its FileStatus) has
PAGE_SUFFIX = ".html"
#: redirects followed for one URL before it is an error
MAX_REDIRECTS = 5
#: sitemap indexes followed into sitemaps this deep
MAX_SITEMAP_DEPTH = 3
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_SITEMAP_ROOTS = ("urlset", "sitemapindex")
_REDIRECTS = (301, 302, 303, 307, 308)
_PERMANENT = (301, 308)
#: the metadata key of a page reached by a redirect: the URL asked
REDIRECTED_FROM = "redirected_from"


class WebOptions(BaseModel):
    """How URLs are read: ``rate`` requests a second per host, at most ``max_pages`` pages of at
    most ``max_bytes`` each, ``timeout`` seconds a request; the mirror and crawl state in
    ``state_dir`` (default: ``web/`` in the store's folder, else ``.synth/web``)."""

    model_config = ConfigDict(frozen=True)

    rate: float = Field(default=2.0, gt=0)
    max_pages: int = Field(default=500, ge=1)
    max_bytes: int = Field(default=10 * 2**20, ge=1)
    timeout: float = Field(default=30.0, gt=0)
    state_dir: Path | None = None
    user_agent: str = USER_AGENT

    def in_folder(self, folder: Path) -> WebOptions:
        """These options with ``state_dir`` set to ``folder`` unless one was given."""
        return self if self.state_dir is not None else self.model_copy(update={"state_dir": folder})


def is_url(path: object) -> bool:
    """Whether ``path`` (as given where a file or folder goes) is an http(s) URL."""
    return isinstance(path, str) and path.lower().startswith(("http://", "https://"))


def public_url(url: str) -> str:
    """``url`` without a user name or password and without its fragment: a page's source name."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme.lower(), host, parts.path or "/", parts.query, ""))


# ---- the seam: a fetched page as a Document --------------------------------------------------------
def page_document(url: str, html: bytes) -> Document:
    """The main text of the page at ``url`` (its navigation, footers and boilerplate left out),
    read as an ``.html`` file is (:mod:`synth.ingest.html`: headings kept as sections); IngestError
    when it has none. The one place fetched HTML becomes a Document."""
    import trafilatura  # imported by the first page read

    from synth.ingest._blocks import join_blocks
    from synth.ingest.html import html_blocks
    from synth.ingest.text import decode_bytes

    markup, _ = decode_bytes(html)
    text, sections = join_blocks(html_blocks(markup))
    if not text.strip():
        raise IngestError("no main text found in the page")
    metadata: dict[str, Any] = {"url": url}
    info = trafilatura.extract_metadata(html, default_url=url)
    if info is not None and info.title:
        metadata["title"] = info.title
    return Document(id="", path="", text=text, sections=sections, metadata=metadata)


class PageReader:
    """The loader of one page's mirror file: :func:`page_document` of its bytes at its URL (and,
    when a redirect led there, the URL asked, kept in its metadata as ``redirected_from``)."""

    def __init__(self, url: str, redirected_from: str | None = None) -> None:
        self.url = url
        self.redirected_from = redirected_from

    def __call__(self, path: Path) -> Document:
        document = page_document(self.url, Path(path).read_bytes())
        if self.redirected_from:
            document.metadata[REDIRECTED_FROM] = self.redirected_from
        return document


# ---- pacing --------------------------------------------------------------------------------------
@dataclass
class HostPacer:
    """Spaces the requests to each host by at least ``interval`` seconds (more when its robots.txt
    asks a longer crawl delay). ``clock`` and ``sleep`` are the monotonic clock and the wait."""

    interval: float
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _last: dict[str, float] = field(default_factory=dict)
    _delays: dict[str, float] = field(default_factory=dict)

    def set_delay(self, host: str, seconds: float) -> None:
        """``host``'s robots.txt asks ``seconds`` between requests."""
        self._delays[host] = seconds

    def wait(self, host: str) -> None:
        """Return once a request to ``host`` may be sent, and count it as sent."""
        gap = max(self.interval, self._delays.get(host, 0.0))
        last = self._last.get(host)
        if last is not None:
            remaining = last + gap - self.clock()
            if remaining > 0:
                self.sleep(remaining)
        self._last[host] = self.clock()


# ---- the crawl state -----------------------------------------------------------------------------
class CrawlState:
    """What earlier crawls left in ``folder``: per URL its validators, its mirror file, and where a
    permanent redirect sends it (``crawl.json``; the bodies under ``pages/``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / STATE_FILE
        self.urls: dict[str, dict[str, Any]] = {}
        try:
            loaded = json.loads(self.path.read_text(encoding="utf-8"))
            if isinstance(loaded, dict) and isinstance(loaded.get("urls"), dict):
                self.urls = loaded["urls"]
        except (OSError, ValueError):
            pass  # no state (or a damaged one): every URL is asked afresh

    def mirror(self, url: str) -> Path:
        """Where the body of ``url`` is kept."""
        return self.folder / "pages" / f"{text_hash(url, 24)}{PAGE_SUFFIX}"

    def validators(self, url: str) -> dict[str, str]:
        """The conditional headers to ask ``url`` with (none when its body is not kept)."""
        known = self.urls.get(url) or {}
        if not self.mirror(url).is_file():
            return {}
        headers = {}
        if known.get("etag"):
            headers["If-None-Match"] = str(known["etag"])
        if known.get("last_modified"):
            headers["If-Modified-Since"] = str(known["last_modified"])
        return headers

    def keep(self, url: str, body: bytes, headers: Any, content_type: str) -> Path:
        """Keep a 200 answer's body and validators; the mirror file is rewritten only when its
        bytes changed (so an unchanged page keeps its file's stat, and its fingerprint holds)."""
        file = self.mirror(url)
        file.parent.mkdir(parents=True, exist_ok=True)
        try:
            same = file.is_file() and file.read_bytes() == body
        except OSError:
            same = False
        if not same:
            tmp = file.with_name(file.name + ".tmp")
            tmp.write_bytes(body)
            tmp.replace(file)
        self.urls[url] = {
            "etag": headers.get("etag"),
            "last_modified": headers.get("last-modified"),
            "content_type": content_type,
            "sha256": file_hash(file),
        }
        return file

    def remember_redirect(self, url: str, target: str) -> None:
        self.urls[url] = {"redirect": target}

    def forget(self, url: str) -> None:
        self.urls.pop(url, None)

    def redirect_of(self, url: str) -> str | None:
        target = (self.urls.get(url) or {}).get("redirect")
        return str(target) if target else None

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps({"version": 1, "urls": self.urls}, indent=1))


# ---- fetching ------------------------------------------------------------------------------------
@dataclass
class Fetched:
    """One URL asked (redirects followed): where it ended, and its answer or why there is none."""

    url: str  # the URL asked
    final: str  # where the redirects led (``url`` when there were none)
    status: int = 0  # the last answer's HTTP status (0: no answer)
    body: bytes = b""
    file: Path | None = None  # the mirror file of a 200 or 304 answer
    content_type: str = ""
    refusal: str = ""  # why it was not fetched or read: robots, size, network
    skipped: bool = False  # the refusal is a skip (robots, size), not an error
    not_modified: bool = False
    redirects: list[str] = field(default_factory=list)


class Crawler:
    """Fetches URLs politely (see the module docstring), one at a time, with one httpx client."""

    def __init__(
        self, options: WebOptions, *, pacer: HostPacer | None = None, client: Any = None
    ) -> None:
        import httpx

        if options.state_dir is None:
            raise ConfigError("a crawl needs a folder for its state (WebOptions.state_dir)")
        self.options = options
        self.state = CrawlState(options.state_dir)
        self.pacer = pacer or HostPacer(1.0 / options.rate)
        self._client = client or httpx.Client(
            headers={"User-Agent": options.user_agent},
            timeout=options.timeout,
            follow_redirects=False,
        )
        self._robots: dict[str, tuple[urllib.robotparser.RobotFileParser | None, str]] = {}

    def close(self) -> None:
        self.state.save()
        self._client.close()

    def __enter__(self) -> Crawler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def fetch(self, url: str) -> Fetched:
        """``url`` asked (conditionally when its body is kept), redirects followed and checked."""
        result = Fetched(url=url, final=url)
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            known = self.state.redirect_of(current)
            if known is not None:  # a permanent redirect seen before: asked no more
                result.redirects.append(current)
                current = known
                continue
            refusal = self._robots_refusal(current)
            if refusal:
                result.final, result.refusal, result.skipped = current, refusal, True
                return result
            self._ask(current, result)
            if result.status in _REDIRECTS and result.final != current:
                result.redirects.append(current)
                current = result.final
                continue
            return result
        result.refusal = f"more than {MAX_REDIRECTS} redirects"
        return result

    def _ask(self, url: str, result: Fetched) -> None:
        import httpx

        host = urlsplit(url).netloc
        headers = self.state.validators(url)
        self.pacer.wait(host)
        try:
            with self._client.stream("GET", url, headers=headers) as response:
                result.status = response.status_code
                result.final = url
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    target = public_url(urljoin(url, response.headers.get("location", "")))
                    result.final = target
                    if response.status_code in _PERMANENT:
                        self.state.remember_redirect(url, target)
                    return
                if response.status_code == 304 and headers:
                    result.not_modified = True
                    result.file = self.state.mirror(url)
                    result.content_type = str((self.state.urls.get(url) or {}).get("content_type"))
                    return
                if response.status_code >= 400:
                    self.state.forget(url)
                    result.refusal = f"HTTP {response.status_code} {response.reason_phrase}".strip()
                    return
                result.content_type = response.headers.get("content-type", "")
                body = self._body(response, result)
                if body is None:
                    return
                result.body = body
                result.file = self.state.keep(url, body, response.headers, result.content_type)
        except httpx.HTTPError as exc:
            result.refusal = f"cannot fetch: {type(exc).__name__}: {one_line(exc)}"

    def _body(self, response: Any, result: Fetched) -> bytes | None:
        """The answer's bytes, or None (and the reason) when it is over ``max_bytes``."""
        limit = self.options.max_bytes
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            result.refusal, result.skipped = f"too big: {declared} bytes, over {limit}", True
            return None
        parts: list[bytes] = []
        size = 0
        for part in response.iter_bytes():
            size += len(part)
            if size > limit:
                result.refusal, result.skipped = f"too big: over {limit} bytes", True
                return None
            parts.append(part)
        return b"".join(parts)

    def _robots_refusal(self, url: str) -> str:
        """Why robots.txt forbids ``url`` to synth ("" when it allows it)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            self._robots[origin] = self._read_robots(origin, parts.netloc)
        parser, why = self._robots[origin]
        if parser is None:
            return why
        if not parser.can_fetch(ROBOTS_AGENT, url):
            return "disallowed by robots.txt"
        return ""

    def _read_robots(
        self, origin: str, host: str
    ) -> tuple[urllib.robotparser.RobotFileParser | None, str]:
        robots_url = f"{origin}/robots.txt"
        fetched = Fetched(url=robots_url, final=robots_url)
        self._ask(robots_url, fetched)
        parser = urllib.robotparser.RobotFileParser(robots_url)
        if fetched.status in (401, 403):
            return None, f"robots.txt forbids the host (HTTP {fetched.status})"
        if fetched.status >= 500 or fetched.status == 0:
            why = fetched.refusal or f"HTTP {fetched.status}"
            return None, f"robots.txt could not be read ({why}): the host is not crawled"
        if 400 <= fetched.status < 500 or fetched.file is None:
            parser.parse([])  # no rules: every path allowed
            return parser, ""
        text = fetched.file.read_bytes().decode("utf-8", errors="replace")
        parser.parse(text.splitlines())
        delay = parser.crawl_delay(ROBOTS_AGENT)
        if delay:
            self.pacer.set_delay(host, float(delay))
        return parser, ""


# ---- sitemaps ------------------------------------------------------------------------------------
def sitemap_urls(body: bytes) -> tuple[str, list[str]] | None:
    """``(root tag, its <loc> URLs)`` when ``body`` is a sitemap or sitemap index, else None."""
    if body[:2] == b"\x1f\x8b":  # a gzipped sitemap
        try:
            body = gzip.decompress(body)
        except (OSError, EOFError):
            return None
    head = body[:512].lstrip()
    if not head.startswith(b"<"):
        return None
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return None
    tag = root.tag.rsplit("}", 1)[-1]
    if tag not in _SITEMAP_ROOTS:
        return None
    locs = [
        (element.text or "").strip()
        for element in root.iter()
        if element.tag.rsplit("}", 1)[-1] == "loc" and (element.text or "").strip()
    ]
    return tag, locs


# ---- pages as files ------------------------------------------------------------------------------
class PageToRead(NamedTuple):
    """A page fetched (or unchanged since it was): its mirror file, source name and reader."""

    file: Path
    name: str  # its public URL, after redirects
    reader: PageReader


def iter_pages(
    urls: Iterable[str], options: WebOptions, seen: set[str]
) -> Iterator[LoadedFile | PageToRead]:
    """Each page the ``urls`` give (a sitemap stands for its pages), in order: the
    ``LoadedFile`` of one that cannot be read, or the :class:`PageToRead` of one to read.
    ``seen`` holds the source names met so far (a page met twice is read once)."""
    with Crawler(options) as crawler:
        walk = _Walk(crawler, seen)
        for given in urls:
            yield from walk.visit(public_url(given), "given", 0)


class _Walk:
    """One crawl's walk: the pages counted against the cap, sitemaps expanded."""

    def __init__(self, crawler: Crawler, seen: set[str]) -> None:
        self.crawler = crawler
        self.seen = seen
        self.pages = 0

    def visit(self, url: str, kind: str, depth: int) -> Iterator[LoadedFile | PageToRead]:
        """``kind``: "given" (a URL the user gave: a sitemap or a page), "sitemap" (listed by a
        sitemap index) or "page" (listed by a sitemap)."""
        if url in self.seen:
            yield _status(url, "skipped", "already read")
            return
        cap = self.crawler.options.max_pages
        if kind == "page":
            if self.pages >= cap:
                yield _status(
                    url, "skipped", f"over the page cap ({cap}; raise it with --max-pages)"
                )
                return
            self.pages += 1
        fetched = self.crawler.fetch(url)
        if fetched.refusal:
            yield _status(url, "skipped" if fetched.skipped else "error", fetched.refusal)
            return
        body = fetched.body
        if fetched.not_modified and fetched.file is not None:
            body = fetched.file.read_bytes()
        found = None
        if kind != "page" and depth < MAX_SITEMAP_DEPTH and not _is_html(fetched.content_type):
            found = sitemap_urls(body)
        if found is not None:
            child = "page" if found[0] == "urlset" else "sitemap"
            for loc in found[1]:
                yield from self.visit(public_url(urljoin(fetched.final, loc)), child, depth + 1)
            return
        if kind == "given":
            self.pages += 1
        yield from self._page(url, fetched)

    def _page(self, url: str, fetched: Fetched) -> Iterator[LoadedFile | PageToRead]:
        name = public_url(fetched.final)
        if name != url and name in self.seen:
            yield _status(url, "skipped", f"already read as {name}")
            return
        self.seen.update({url, name})
        if not _is_html(fetched.content_type):
            kind = fetched.content_type.split(";")[0].strip() or "no content type"
            yield _status(name, "skipped", f"not HTML ({kind})")
            return
        assert fetched.file is not None
        yield PageToRead(fetched.file, name, PageReader(name, url if fetched.redirects else None))


def _is_html(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower() in _HTML_TYPES


def _status(url: str, status: str, reason: str) -> LoadedFile:
    return LoadedFile(
        FileStatus(path=url, status=status, reason=reason, suffix=PAGE_SUFFIX),  # type: ignore[arg-type]
        None,
    )


__all__ = [
    "PAGE_SUFFIX",
    "REDIRECTED_FROM",
    "ROBOTS_AGENT",
    "USER_AGENT",
    "CrawlState",
    "Crawler",
    "HostPacer",
    "PageReader",
    "PageToRead",
    "WebOptions",
    "is_url",
    "iter_pages",
    "page_document",
    "public_url",
    "sitemap_urls",
]
