"""Read PowerPoint ``.pptx`` decks with python-pptx: one page per slide, its notes kept.

A slide's text is its title, then the text of its other shapes from top to bottom and left to
right (a group's shapes in turn, a table as a line per row with cells separated by `` | ``), then
its speaker notes after ``Speaker notes:``; blocks are separated by a blank line, slides too. Each
slide is a page (``Document.pages``, numbered as in the deck) and a section of its own, named by
its title (``Slide N`` when it has none), that no chunk crosses. Slides without text are left out
and counted (``metadata["slides_without_text"]``); pictures and charts are not read.
"""

from __future__ import annotations

from pathlib import Path

from pptx import Presentation
from pptx.exc import PackageNotFoundError
from pptx.shapes.base import BaseShape
from pptx.shapes.group import GroupShape
from pptx.slide import Slide

from synth.data import Document
from synth.ingest._blocks import Block, units_document
from synth.ingest._util import damaged, package_failures, zip_package

CELL_SEPARATOR = " | "
NOTES_LABEL = "Speaker notes:"

_PPTX_FAILURES = package_failures(PackageNotFoundError, AttributeError, TypeError)


def read_pptx(path: Path) -> Document:
    """Every slide's title, text and notes, a page and a section per slide; IngestError when the
    file is not a .pptx or no slide has text."""
    path = zip_package(path, "a PowerPoint .pptx file")
    with damaged(".pptx", _PPTX_FAILURES):
        deck = Presentation(str(path))
        slides = [(number, _slide_blocks(slide)) for number, slide in enumerate(deck.slides, 1)]
    units = [(n, title or f"Slide {n}", blocks) for n, (title, blocks) in slides]
    nothing = f"no text on any of its {len(slides)} slides"
    return units_document(units, "slide_count", "slides_without_text", nothing)


def _slide_blocks(slide: Slide) -> tuple[str, list[Block]]:
    """The slide's title (or "") and its blocks: title, shapes' text, notes."""
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    blocks = [Block(title)] if title else []
    others = [
        shape
        for shape in slide.shapes
        if title_shape is None or shape.shape_id != title_shape.shape_id
    ]
    for shape in _reading_order(others):
        blocks.extend(_shape_blocks(shape))
    if slide.has_notes_slide:
        notes_frame = slide.notes_slide.notes_text_frame
        notes = notes_frame.text.strip() if notes_frame is not None else ""
        if notes:
            blocks.append(Block(f"{NOTES_LABEL}\n{notes}"))
    return title, blocks


def _reading_order(shapes: list[BaseShape]) -> list[BaseShape]:
    """Top to bottom, then left to right (shapes without a position keep their order, first)."""
    return sorted(shapes, key=lambda shape: (shape.top or 0, shape.left or 0))


def _shape_blocks(shape: BaseShape) -> list[Block]:
    if isinstance(shape, GroupShape):
        return [
            block for inner in _reading_order(list(shape.shapes)) for block in _shape_blocks(inner)
        ]
    if getattr(shape, "has_table", False):
        rows = []
        for row in shape.table.rows:  # type: ignore[attr-defined]
            cells = [" ".join(cell.text.split()) for cell in row.cells]
            if any(cells):
                rows.append(CELL_SEPARATOR.join(cells))
        return [Block("\n".join(rows))]
    if getattr(shape, "has_text_frame", False):
        lines = [" ".join(p.text.split()) for p in shape.text_frame.paragraphs]  # type: ignore[attr-defined]
        return [Block("\n".join(line for line in lines if line))]
    return []


__all__ = ["NOTES_LABEL", "read_pptx"]
