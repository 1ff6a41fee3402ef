"""Read Markdown files: their text as it is (as ``.txt``), and their headings as sections.

ATX headings (``## Installation``) and setext headings (a line underlined with ``===`` or ``---``)
outside fenced code blocks and a leading YAML front matter become ``Document.sections``, each with
the path of headings above it (``["Installation", "Linux"]``). The text is not changed, so chunks
and their ids are those of the same file read as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from synth.data import Document, Section
from synth.ingest.text import read_text

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
# lines that open a list item, a quote or a table row rather than a paragraph: never a setext title
_NOT_A_TITLE = re.compile(r" {0,3}([-+*>|]|\d+[.)])(\s|$)")
# inline markup a heading's text is read without: links and images keep their text, code spans
# and emphasis lose their marks
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKS = re.compile(r"(\*\*|__|\*|`)")


def read_markdown(path: Path) -> Document:
    """The file's text (decoded as :func:`~synth.ingest.text.read_text` does) and its headings."""
    document = read_text(path)
    return document.model_copy(update={"sections": markdown_sections(document.text)})


def markdown_sections(text: str) -> list[Section]:
    """A section at each heading of the Markdown ``text``, with the path of headings above it."""
    sections = []
    stack: list[tuple[int, str]] = []
    for start, level, title in _headings(text):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        sections.append(Section(start=start, path=[name for _, name in stack]))
    return sections


def _headings(text: str) -> Iterator[tuple[int, int, str]]:
    """``(offset, level, title)`` of each heading, in order."""
    lines = text.splitlines(keepends=True)
    begin = _front_matter_end(lines)
    offset = sum(len(line) for line in lines[:begin])
    fence = ""
    paragraph: tuple[int, list[str]] | None = None  # where the open paragraph starts, its lines
    for line in lines[begin:]:
        start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        opened = _FENCE.match(body)
        if fence:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = ""
            continue
        if opened:
            fence, paragraph = opened.group(1), None
            continue
        atx = _ATX.match(body)
        underline = _SETEXT.match(body)
        if atx:
            title = _plain(atx.group(2) or "")
            if title:
                yield start, len(atx.group(1)), title
            paragraph = None
        elif underline and paragraph is not None:
            title = _plain(" ".join(paragraph[1]))
            if title:
                yield paragraph[0], 1 if underline.group(1)[0] == "=" else 2, title
            paragraph = None
        elif underline or not body.strip() or body.startswith(("    ", "\t")):
            paragraph = None  # a thematic break, a blank line, or indented code
        elif paragraph is not None:
            paragraph[1].append(body.strip())
        elif not _NOT_A_TITLE.match(body):
            paragraph = (start, [body.strip()])


def _front_matter_end(lines: list[str]) -> int:
    """How many lines a YAML front matter (``---`` lines around it, at the very start) takes."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    for number, line in enumerate(lines[1:], start=1):
        if line.rstrip() in ("---", "..."):
            return number + 1
    return 0


def _plain(title: str) -> str:
    """A heading's text without its inline marks."""
    return " ".join(_MARKS.sub("", _LINK.sub(r"\1", title)).split())


__all__ = ["markdown_sections", "read_markdown"]
