"""Read HTML pages: their main content, without navigation, headers, footers and other boilerplate.

trafilatura finds the main content of a page (it drops menus, sidebars, cookie banners, footers,
comments) and hands it back as clean HTML: headings, paragraphs, lists, tables, quotes and code.
Each becomes one block of text, separated by a blank line: a list item is a line starting with
``- ``, a table row a line of cells separated by `` | ``, a paragraph's whitespace one space. Every heading (``h1``..``h6``) is kept as
its own block and starts a section (``Document.sections``) with the path of headings above it.
Images, links' targets and scripts are not read.

:func:`html_blocks` is the same extraction for HTML that is not a file; an EPUB chapter, all content,
is read whole (``main_content=False``): trafilatura's heuristics, made for web pages, drop a short
chapter's heading or merge it with the text.
"""

from __future__ import annotations

import functools
import re
from configparser import ConfigParser
from pathlib import Path

import lxml.html
import trafilatura
from lxml import etree
from trafilatura.settings import use_config

from synth.data import Document
from synth.errors import IngestError
from synth.ingest._blocks import Block, join_blocks
from synth.ingest.text import decode_bytes

CELL_SEPARATOR = " | "
_CONTROL_SAMPLE = 20_000


def read_html(path: Path) -> Document:
    """The page's main content as text, with its headings as sections; IngestError when the page
    has no main content (empty, or navigation and boilerplate only) or is not text."""
    data = Path(path).read_bytes()
    if not data.strip():
        raise IngestError("empty file")
    markup, encoding = decode_bytes(data)
    if "\x00" in markup[:_CONTROL_SAMPLE]:
        raise IngestError(f"not an HTML file: binary content (decoded as {encoding})")
    blocks = html_blocks(markup)
    text, sections = join_blocks(blocks)
    if not text.strip():
        raise IngestError("no main content (an empty page, or navigation and boilerplate only)")
    headings = sum(1 for block in blocks if block.level is not None)
    return Document(
        id="",
        path="",
        text=text,
        sections=sections,
        metadata={"encoding": encoding, "headings": headings},
    )


def html_blocks(markup: str, *, main_content: bool = True) -> list[Block]:
    """The blocks of ``markup``: of its main content as trafilatura finds it (``main_content``),
    else of its whole body (an e-book's chapter, all content); [] when there is none."""
    if main_content:
        extracted = _main_content(markup)
        if not extracted:
            return []
        markup = extracted
    data = markup.encode("utf-8")
    try:
        root = lxml.html.document_fromstring(data, parser=_PARSER)
    except etree.ParserError:  # nothing an HTML parser can make a document of
        return []
    _gather_rows(root)
    body = root.find("body")
    blocks: list[Block] = []
    _walk(body if body is not None else root, blocks)
    return [block for block in blocks if block.text.strip()]


def _extract(markup: str) -> str | None:
    return trafilatura.extract(
        markup,
        output_format="html",
        include_tables=True,
        include_comments=False,
        include_images=False,
        include_links=False,
        include_formatting=False,
        deduplicate=False,
        with_metadata=False,
        config=_config(),
    )


_STRUCTURE = re.compile(r"<(?:h[1-6]|li)\b")


def _main_content(markup: str) -> str | None:
    """trafilatura's main content of the page. A page whose content is not in a ``main``, an
    ``article`` or a container it knows (headings and paragraphs straight in ``body``, as pandoc
    writes them) gets only its paragraphs from trafilatura's fallback: its headings and lists are
    lost. Such a page's body is read again as a ``main`` (navigation, header, footer and sidebars
    are still left out), and that reading is kept when it has the structure the first lost."""
    extracted = _extract(markup)
    if extracted and _STRUCTURE.search(extracted):
        return extracted
    wrapped = _body_as_main(markup)
    if wrapped is None:
        return extracted
    again = _extract(wrapped)
    return again if again and _STRUCTURE.search(again) else extracted


def _body_as_main(markup: str) -> str | None:
    """The page with its body's content inside a ``main``; None when it has one (or an
    ``article``), or has no heading or list to lose."""
    try:
        root = lxml.html.document_fromstring(markup.encode("utf-8"), parser=_PARSER)
    except etree.ParserError:
        return None
    body = root.find("body")
    if body is None or root.xpath("//main|//article|//*[@role='main']"):
        return None
    if not body.xpath(".//h1|.//h2|.//h3|.//h4|.//h5|.//h6|.//li"):
        return None
    main = etree.Element("main")
    main.text, body.text = body.text, None
    for child in list(body):
        main.append(child)
    body.append(main)
    return lxml.html.tostring(root, encoding="unicode")


@functools.cache
def _config() -> ConfigParser:
    """trafilatura's settings, but its own extraction is kept however short: by default, under 250
    characters it falls back to a cruder one that keeps a short page's menu and loses its headings."""
    config = use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    return config


_PARSER = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
# elements whose text is one block
_PARAGRAPHS = {"p", "blockquote", "address", "figcaption", "summary", "dt", "dd", "caption"}
# elements that hold blocks (their loose text, between blocks, is a paragraph of its own)
_CONTAINERS = {
    "body", "div", "section", "article", "main", "header", "footer", "aside", "figure",
    "details", "dl", "center", "form", "fieldset", "span", "hgroup",
}  # fmt: skip
# elements never read: code that runs, styles, what is not text, navigation
_SKIPPED = {
    "script",
    "style",
    "noscript",
    "template",
    "head",
    "svg",
    "math",
    "nav",
    "img",
    "iframe",
}


_ROW_PARENTS = {"table", "thead", "tbody", "tfoot"}


def _gather_rows(root: etree._Element) -> None:
    """Put rows found outside a table back in one, each run of them in its own: trafilatura hands
    back the rows of a page that is one table without their ``table``, which would read as one
    line of all their cells."""
    for row in list(root.iter("tr")):
        parent = row.getparent()
        if parent is None or parent.tag in _ROW_PARENTS:
            continue
        table = row.getprevious()  # the run's table, when the row follows it with no text between
        if table is None or table.tag != "table" or (table.tail or "").strip():
            table = etree.Element("table")
            row.addprevious(table)
        tail, row.tail = row.tail, None
        table.append(row)
        table.tail = (table.tail or "") + (tail or "")  # text after the row stays after the table


def _walk(parent: etree._Element, blocks: list[Block]) -> None:
    """Append the blocks under ``parent``; text between its block children becomes paragraphs."""
    loose: list[str] = [parent.text or ""]
    for child in parent:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in _SKIPPED or not tag:
            pass
        elif tag in _HEADINGS or tag in _PARAGRAPHS or tag in ("ul", "ol", "table", "pre", "hr"):
            _flush(loose, blocks)
            blocks.append(_block(child, tag))
        elif tag in _CONTAINERS and _has_blocks(child):
            _flush(loose, blocks)
            _walk(child, blocks)
        else:  # inline: part of the loose text
            loose.append(_text(child))
        loose.append(child.tail or "")
    _flush(loose, blocks)


def _block(element: etree._Element, tag: str) -> Block:
    if tag in _HEADINGS:
        return Block(_inline(element), _HEADINGS[tag])
    if tag in ("ul", "ol"):
        items = [_inline(item) for item in element.iterchildren("li")]
        return Block("\n".join(f"- {item}" for item in items if item))
    if tag == "table":
        return Block(_table(element))
    if tag == "pre":
        return Block(_text(element).strip("\n"))
    if tag == "hr":
        return Block("")
    return Block(_inline(element))


def _has_blocks(element: etree._Element) -> bool:
    return any(
        isinstance(child.tag, str) and child.tag not in _SKIPPED and child.tag not in _INLINE
        for child in element.iter()
        if child is not element
    )


_INLINE = {
    "a", "abbr", "b", "bdi", "bdo", "br", "cite", "code", "data", "dfn", "em", "font", "i",
    "kbd", "mark", "q", "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var",
    "wbr", "del", "ins",
}  # fmt: skip


def _flush(loose: list[str], blocks: list[Block]) -> None:
    text = " ".join("".join(loose).split())
    if text:
        blocks.append(Block(text))
    loose.clear()


def _text(element: etree._Element) -> str:
    """All the text under ``element`` (and not its tail), skipping what is never read."""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and child.tag not in _SKIPPED:
            parts.append("\n" if child.tag == "br" else _text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _inline(element: etree._Element) -> str:
    """The element's text with every run of whitespace made one space (nested lists flattened)."""
    return " ".join(_text(element).split())


def _table(element: etree._Element) -> str:
    lines = []
    for row in element.iter("tr"):
        cells = [_inline(cell) for cell in row if cell.tag in ("td", "th")]
        if any(cells):
            lines.append(CELL_SEPARATOR.join(cells))
    return "\n".join(lines)


__all__ = ["html_blocks", "read_html"]
