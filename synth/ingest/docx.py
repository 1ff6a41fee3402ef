"""Read Word ``.docx`` files: paragraphs and table text, in document order.

Each paragraph is one block; a paragraph styled as a heading ("Heading 1".."Heading 9", "Title",
or a style based on one) also starts a section (``Document.sections``) with the path of headings
above it. A table becomes one block with a line per row and its cells separated
by `` | `` (a merged cell is written once). Blocks are separated by a blank line. Headers, footers,
comments and text boxes are not read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import docx
from docx.document import Document as WordDocument
from docx.opc.exceptions import OpcError
from docx.table import Table
from docx.text.paragraph import Paragraph

from synth.data import Document
from synth.errors import IngestError
from synth.ingest._blocks import Block, join_blocks
from synth.ingest._util import damaged, package_failures, zip_package

CELL_SEPARATOR = " | "
# the built-in heading styles by name (their style ids vary with the language Word runs in)
_HEADING_STYLE = re.compile(r"(?i)heading ([1-9])|title")
_STYLE_DEPTH = 10

# A part whose XML is well formed but not what python-docx expects (a root element in the wrong
# namespace, a relationship without a target) fails with AttributeError or TypeError; those are
# only caught around python-docx's own parsing, so a bug in our reading of it stays visible.
_DOCX_FAILURES = package_failures(OpcError)
_PACKAGE_FAILURES = (*_DOCX_FAILURES, AttributeError, TypeError)


def read_docx(path: Path) -> Document:
    """The document's paragraphs and tables as text; IngestError when the file is not a .docx."""
    path = zip_package(path, "a Word .docx file")
    with damaged(".docx", _PACKAGE_FAILURES):
        document = docx.Document(str(path))
    with damaged(".docx", _DOCX_FAILURES):
        blocks = list(_blocks(document))
    tables = sum(1 for kind, _ in blocks if kind == "table")
    text, sections = join_blocks(block for _, block in blocks)
    if not text.strip():
        raise IngestError(
            f"no text ({len(document.tables)} empty tables, {len(document.inline_shapes)} images)"
        )
    return Document(id="", path="", text=text, sections=sections, metadata={"tables": tables})


def _blocks(container: WordDocument) -> Iterator[tuple[str, Block]]:
    """Each block with text and its kind: "paragraph" (a heading has its level, 0 for the Title
    style) or "table"."""
    for item in container.iter_inner_content():
        if isinstance(item, Paragraph):
            text = item.text.strip()
            if text:
                yield "paragraph", Block(text, heading_level(item))
        elif isinstance(item, Table):
            text = table_text(item)
            if text:
                yield "table", Block(text)


def heading_level(paragraph: Paragraph) -> int | None:
    """The heading level of a paragraph styled "Heading N" (or a style based on one), 0 for
    "Title", None for any other paragraph."""
    style = paragraph.style
    for _ in range(_STYLE_DEPTH):  # a style's base chain, in case one is based on itself
        if style is None:
            return None
        match = _HEADING_STYLE.fullmatch(style.name or "")
        if match:
            return int(match.group(1)) if match.group(1) else 0
        style = style.base_style
    return None


def table_text(table: Table) -> str:
    """One line per row, cells joined by CELL_SEPARATOR; a merged cell counts once."""
    seen: set[object] = set()
    lines = []
    for row in table.rows:
        cells = []
        for cell in row.cells:
            if cell._tc in seen:  # python-docx repeats a merged cell for each grid column it spans
                continue
            seen.add(cell._tc)
            cells.append(_cell_text(cell))
        if any(cells):
            lines.append(CELL_SEPARATOR.join(cells))
    return "\n".join(lines)


def _cell_text(cell: object) -> str:
    parts = []
    for item in cell.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(item, Paragraph):
            parts.append(item.text.strip())
        elif isinstance(item, Table):  # a nested table, flattened onto the row's line
            parts.append(table_text(item).replace("\n", " ; "))
    return " ".join(part for part in parts if part)


__all__ = ["CELL_SEPARATOR", "heading_level", "read_docx", "table_text"]
