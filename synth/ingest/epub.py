"""Read EPUB e-books with ebooklib: a page per chapter, its HTML read as a web page is.

The chapters are the documents of the book's reading order (its spine), the navigation document
left out. Each chapter's XHTML is read into blocks as a web page's main content is
(:func:`~synth.ingest.html.html_blocks`, but the whole body: a chapter has no boilerplate to lose),
so its headings start sections too. A
chapter is named by the book's table of contents, else by its first heading, else by its file
name. A chapter is a page (``Document.pages``, numbered by its place in the reading order) and a
section (``["The Harbour"]``, its headings below: ``["The Harbour", "Night"]``) that no chunk
crosses. Chapters are separated by a blank line; chapters without text are counted
(``metadata["chapters_without_text"]``). Pictures are not read.
"""

from __future__ import annotations

import posixpath
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ebooklib import ITEM_DOCUMENT, epub

from synth.data import Document
from synth.ingest._blocks import Block, units_document
from synth.ingest._util import damaged, package_failures, zip_package
from synth.ingest.html import html_blocks
from synth.ingest.text import decode_bytes

_EPUB_FAILURES = package_failures(epub.EpubException, IndexError, AttributeError, TypeError)


def read_epub(path: Path) -> Document:
    """Every chapter's text in reading order, a section per chapter; IngestError when the file
    is not an EPUB or no chapter has text."""
    path = zip_package(path, "an EPUB file")
    with damaged("EPUB", _EPUB_FAILURES):
        with warnings.catch_warnings():  # ebooklib warns about its own future defaults
            warnings.simplefilter("ignore")
            book = epub.read_epub(str(path), {"ignore_ncx": True})
        chapters = list(_chapters(book))
    units = []
    for number, (name, markup) in enumerate(chapters, start=1):
        blocks = html_blocks(markup, main_content=False)
        title = name or next((b.text for b in blocks if b.level is not None), "")
        title = " ".join(title.split()) or "Chapter"
        if blocks and blocks[0].level is not None and _same(blocks[0].text, title):
            blocks[0] = Block(blocks[0].text)  # the chapter's own heading: its section below
        units.append((number, title, blocks))
    nothing = f"no text in any of its {len(chapters)} chapters"
    return units_document(units, "chapter_count", "chapters_without_text", nothing)


def _chapters(book: epub.EpubBook) -> Iterator[tuple[str, str]]:
    """(title from the table of contents or "", XHTML) of each chapter in reading order."""
    titles = _toc_titles(book.toc)
    for entry in book.spine:
        idref = entry[0] if isinstance(entry, tuple | list) else entry
        item = book.get_item_with_id(idref)
        if item is None or isinstance(item, epub.EpubNav) or item.get_type() != ITEM_DOCUMENT:
            continue
        # the chapter's bytes as the book holds them (ebooklib's get_content() writes them anew,
        # a replacement character for every letter of a chapter that is not UTF-8), decoded as
        # UTF-8 as EPUB asks, else by a BOM or the detected encoding (older books have Latin-1)
        content = item.content if isinstance(item.content, bytes) else item.get_content()
        markup = decode_bytes(content)[0] if isinstance(content, bytes) and content else ""
        yield titles.get(_href(item.get_name()), ""), markup


def _toc_titles(toc: Any) -> dict[str, str]:
    """Each chapter file's title in the table of contents (its first entry), by file name."""
    titles: dict[str, str] = {}
    for entry in toc or ():
        if isinstance(entry, tuple | list):  # (a section heading, its entries)
            head, children = entry[0], entry[1] if len(entry) > 1 else []
            _add_title(titles, head)
            for name, title in _toc_titles(children).items():
                titles.setdefault(name, title)
        else:
            _add_title(titles, entry)
    return titles


def _add_title(titles: dict[str, str], entry: Any) -> None:
    href, title = getattr(entry, "href", None), getattr(entry, "title", None)
    if href and title:
        titles.setdefault(_href(str(href)), " ".join(str(title).split()))


def _href(href: str) -> str:
    """A chapter's file name from a link to it (its fragment and folder left out)."""
    return posixpath.basename(href.split("#", 1)[0])


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


__all__ = ["read_epub"]
