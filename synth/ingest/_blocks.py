"""Blocks of text (paragraphs, headings, rows) joined into a document's text and its sections."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from synth.data import Section

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


__all__ = ["BLOCK_SEPARATOR", "Block", "join_blocks"]
