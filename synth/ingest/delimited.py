"""Read ``.csv`` and ``.tsv`` files with the standard library: one line per row, naming its cells.

The file is decoded as a text file is (:func:`synth.ingest.text.decode_bytes`), its delimiter
guessed from its first lines (``,`` ``;`` tab or ``|``; a ``.tsv`` is tab-separated), and its rows
written as :mod:`synth.ingest._rows` describes (``Row 3 | Product: Widget | Price: 4.50``, the row
numbers those of the file's records, the header row 1). A CSV has no sections.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from synth.data import Document
from synth.errors import IngestError
from synth.ingest._rows import row_lines
from synth.ingest.text import decode_bytes

_DELIMITERS = ",;\t|"
_SNIFF_CHARS = 64 * 1024


def read_csv(path: Path) -> Document:
    """The file's rows as lines naming their cells; IngestError when it is empty, not text, or
    not well-formed CSV."""
    path = Path(path)
    data = path.read_bytes()
    if not data.strip():
        raise IngestError("empty file")
    text, encoding = decode_bytes(data)
    if "\x00" in text[:_SNIFF_CHARS]:
        raise IngestError(f"not a CSV file: binary content (decoded as {encoding})")
    dialect = _dialect(text, tab=path.suffix.lower() == ".tsv")
    if len(text) > csv.field_size_limit():
        # the file is in memory whole, so no field can be longer than it: a long text cell is
        # data, not the runaway field the limit (128 KiB) guards a stream against. Only raised,
        # never lowered back, so another thread's reading is never cut short.
        csv.field_size_limit(len(text))
    lines = list(row_lines(_records(text, dialect)))
    if not lines:
        raise IngestError("no values in any row")
    return Document(
        id="",
        path="",
        text="\n".join(lines),
        metadata={"encoding": encoding, "delimiter": dialect.delimiter, "rows": len(lines)},
    )


def _dialect(text: str, *, tab: bool) -> type[csv.Dialect]:
    if tab:
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:_SNIFF_CHARS], delimiters=_DELIMITERS)
    except csv.Error:  # one column, or too irregular to tell: commas
        return csv.excel


def _records(text: str, dialect: type[csv.Dialect]) -> Iterator[tuple[int, list[str]]]:
    """(record number from 1, cells) of each record; IngestError naming the line where the
    file stops being well-formed CSV."""
    reader = csv.reader(io.StringIO(text, newline=""), dialect, strict=True)
    try:
        yield from enumerate(reader, start=1)
    except csv.Error as exc:
        raise IngestError(f"malformed CSV at line {reader.line_num}: {exc}") from exc


__all__ = ["read_csv"]
