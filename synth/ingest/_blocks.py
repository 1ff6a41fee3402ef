"""Blocks of text (paragraphs, headings, rows) joined into a document's text and its sections."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from synth.data import Document, Page, Section
from synth.errors import IngestError

BLOCK_SEPARATOR = "\n\n"


class Block(NamedTuple):
    """One paragraph, list, table or heading; ``level`` is a heading's (1 outermost), else None."""

    text: str
    level: int | None = None


def join_blocks(
    blocks: Iterable[Block], above: Sequence[str] = (), *, offset: int = 0
) -> tuple[str, list[Section]]:
    """The blocks' text (as given; blank ones left out), separated by a blank line, and a section
    at each heading.

    Each section's path is ``above`` followed by the headings over it (a heading closes the ones at
    its level and below). Section starts count from ``offset``, where the text will be placed.
    """
    parts: list[str] = []
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    position = offset
    for block in blocks:
        text = block.text
        if not text.strip():
            continue
        if parts:
            position += len(BLOCK_SEPARATOR)
        if block.level is not None:
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            stack.append((block.level, " ".join(text.split())))
            sections.append(Section(start=position, path=[*above, *(t for _, t in stack)]))
        parts.append(text)
        position += len(text)
    return BLOCK_SEPARATOR.join(parts), sections


def units_document(
    units: Sequence[tuple[int, str, Sequence[Block]]], count_key: str, empty_key: str, nothing: str
) -> Document:
    """The Document of units (a slide, a sheet, a chapter: ``(page number, title, blocks)``): their
    text, one page each and a section that no chunk crosses into, named by the title, with the
    unit's headings under it. A unit without text is left out (its page number is skipped); the
    metadata counts the units (``count_key``) and those left out (``empty_key``, when any).
    IngestError ``nothing`` when no unit has text."""
    parts: list[str] = []
    pages: list[Page] = []
    sections: list[Section] = []
    offset = 0
    for number, title, blocks in units:
        start = offset + (len(BLOCK_SEPARATOR) if parts else 0)
        text, inner = join_blocks(blocks, [title], offset=start)
        if not text.strip():
            continue
        pages.append(Page(number=number, start=start))
        sections.append(Section(start=start, path=[title], split=True))
        sections.extend(inner)
        parts.append(text)
        offset = start + len(text)
    if not pages:
        raise IngestError(nothing)
    metadata: dict[str, Any] = {count_key: len(units)}
    if len(pages) < len(units):
        metadata[empty_key] = len(units) - len(pages)
    text = BLOCK_SEPARATOR.join(parts)
    return Document(id="", path="", text=text, pages=pages, sections=sections, metadata=metadata)


__all__ = ["BLOCK_SEPARATOR", "Block", "join_blocks", "units_document"]
