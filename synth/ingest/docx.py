"""Read Word ``.docx`` files: paragraphs and table text, in document order.

Each paragraph is one block; a table becomes one block with a line per row and its cells separated
by `` | `` (a merged cell is written once). Blocks are separated by a blank line. Headers, footers,
comments and text boxes are not read.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import docx
from docx.document import Document as WordDocument
from docx.opc.exceptions import OpcError
from docx.table import Table
from docx.text.paragraph import Paragraph
from lxml import etree

from synth.data import Document
from synth.errors import IngestError
from synth.ingest._util import one_line

CELL_SEPARATOR = " | "

# What python-docx raises on a file that is not a well-formed Word package.
_DOCX_FAILURES = (OpcError, zipfile.BadZipFile, etree.XMLSyntaxError, KeyError, ValueError)


def read_docx(path: Path) -> Document:
    """The document's paragraphs and tables as text; IngestError when the file is not a .docx."""
    path = Path(path)
    if path.stat().st_size == 0:
        raise IngestError("empty file")
    if not zipfile.is_zipfile(path):
        raise IngestError("not a Word .docx file (not a zip package)")
    try:
        document = docx.Document(str(path))
        blocks = list(_blocks(document))
    except _DOCX_FAILURES as exc:
        raise IngestError(f"damaged .docx: {one_line(exc)}") from exc
    tables = sum(1 for kind, _ in blocks if kind == "table")
    text = "\n\n".join(block for _, block in blocks)
    if not text.strip():
        raise IngestError(
            f"no text ({len(document.tables)} empty tables, {len(document.inline_shapes)} images)"
        )
    return Document(id="", path="", text=text, metadata={"tables": tables})


def _blocks(container: WordDocument) -> Iterator[tuple[str, str]]:
    for item in container.iter_inner_content():
        if isinstance(item, Paragraph):
            text = item.text.strip()
            if text:
                yield "paragraph", text
        elif isinstance(item, Table):
            text = table_text(item)
            if text:
                yield "table", text


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


__all__ = ["CELL_SEPARATOR", "read_docx", "table_text"]
