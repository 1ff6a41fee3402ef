"""The ``.csv`` dataset file: one golden per row, lossless.

Columns are the golden's fields, in order, under a header row. Cells:

- text fields (``input``, ``actual_output``, ``expected_output``) hold the text as is; an empty cell
  is null, and the empty string is written ``""`` (the JSON for it). A text that itself starts and
  ends with a double quote is written as JSON too, so it cannot be mistaken for one;
- list fields hold a JSON list (``[]`` for an empty list, an empty cell for null);
- ``metadata`` holds a JSON object (an empty cell reads as ``{}``).

A dataset with conversational goldens has four more columns: ``scenario``, ``expected_outcome``
and ``user_description`` (text, as above) and ``turns`` (a JSON list; empty for a single-turn
golden beside them).

The dataset's metadata is in the ``<name>.meta.json`` sidecar. Errors name the row as a
spreadsheet shows it: the header is row 1, the first golden row 2. A header with deepeval's
``source_file`` or ``additional_metadata`` column is read as deepeval's CSV (the ``deepeval-csv``
export, see ``synth/dataset/_deepeval_csv.py``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth._files import write_atomic
from synth.data import Golden
from synth.dataset._deepeval_csv import MARKER_COLUMNS, read_deepeval_rows
from synth.dataset._io import dumps, read_sidecar, read_text, write_sidecar
from synth.dataset._records import (
    CONVERSATION_FIELDS,
    CONVERSATION_TEXT_FIELDS,
    FIELDS,
    LIST_FIELDS,
    STRING_FIELDS,
    TOOL_FIELDS,
    columns_of,
    to_synth,
    validate_golden,
)
from synth.errors import DatasetError

# contexts are long; the csv module's default cap (128 KiB per cell) is too small for some goldens
_FIELD_SIZE_LIMIT = 1 << 30
_TEXT_FIELDS = (*STRING_FIELDS, *CONVERSATION_TEXT_FIELDS)


def write_csv(path: Path, goldens: Sequence[Golden], metadata: Mapping[str, Any]) -> None:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    columns = columns_of(goldens)
    writer.writerow(columns)
    for index, golden in enumerate(goldens):
        record = to_synth(golden)
        where = f"{path}: index {index}"
        writer.writerow([_cell(record, field, where) for field in columns])
    write_atomic(path, buffer.getvalue())
    write_sidecar(path, metadata)


def _cell(record: Mapping[str, Any], field: str, where: str) -> str:
    value = record.get(field)
    if value is None:
        return ""
    if field in _TEXT_FIELDS and isinstance(value, str):
        quoted = value[:1] == '"' and value[-1:] == '"'
        return dumps(value) if value == "" or quoted else value
    try:
        return dumps(value)
    except (TypeError, ValueError) as exc:
        raise DatasetError(
            f"cannot save {where}: field '{field}' cannot be written as JSON ({exc})"
        ) from None


def read_csv(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    if csv.field_size_limit() < _FIELD_SIZE_LIMIT:
        csv.field_size_limit(_FIELD_SIZE_LIMIT)
    # strict: a quoted cell that is never closed, or text after a closing quote, is an error
    # rather than a cell that silently swallows the rest of the file
    rows = _rows(csv.reader(io.StringIO(read_text(path), newline=""), strict=True), path)
    header = next(rows, None)
    if header is None:
        raise DatasetError(f"{path}: empty file (expected a header row: {','.join(FIELDS)})")
    if MARKER_COLUMNS & {name.strip() for name in header}:  # deepeval's CSV (an export)
        return read_deepeval_rows(rows, header, path), {}
    columns = _check_header(header, path)
    goldens = []
    for row_number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        goldens.append(_golden(row, columns, f"{path}: row {row_number}"))
    return goldens, read_sidecar(path)


def _rows(reader: Any, path: Path) -> Iterator[list[str]]:
    """The reader's rows; a CSV syntax error names the row and the line it starts on."""
    row_number = 1
    while True:
        first_line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            hint = " (a quoted cell is never closed)" if "end of data" in str(exc) else ""
            raise DatasetError(
                f"{path}: row {row_number} (line {first_line}): unreadable CSV: {exc}{hint}"
            ) from None
        yield row
        row_number += 1


def _check_header(header: list[str], path: Path) -> list[str]:
    columns = [name.strip() for name in header]
    for name in columns:
        if name not in FIELDS and name not in TOOL_FIELDS and name not in CONVERSATION_FIELDS:
            known = ", ".join((*FIELDS, *TOOL_FIELDS, *CONVERSATION_FIELDS))
            raise DatasetError(f"{path}: row 1: unknown column '{name}' (a golden has: {known})")
    if len(set(columns)) != len(columns):
        raise DatasetError(f"{path}: row 1: a column appears twice in the header")
    if "input" not in columns:
        raise DatasetError(f"{path}: row 1: missing column 'input'")
    return columns


def _golden(row: list[str], columns: list[str], where: str) -> Golden:
    if len(row) > len(columns):
        raise DatasetError(
            f"{where}: has {len(row)} cells but the header has {len(columns)} columns"
        )
    data: dict[str, Any] = {}
    for field, cell in zip(columns, row, strict=False):  # a short row leaves the rest empty
        if cell == "":
            if field in _TEXT_FIELDS or field in ("context", "retrieval_context"):
                data[field] = None  # null; for input, validation reports it missing
            continue  # context_ids, source_files, metadata take their defaults; turns none
        data[field] = _text(cell) if field in _TEXT_FIELDS else _json_cell(cell, field, where)
    if data.get("input", "") is None:
        del data["input"]  # missing (a conversation's comes from its turns)
    return validate_golden(data, where)


def _text(cell: str) -> str:
    if len(cell) >= 2 and cell[0] == '"' and cell[-1] == '"':
        try:
            value = json.loads(cell)
        except json.JSONDecodeError:
            return cell  # typed by a person, not written by synth: keep it as is
        if isinstance(value, str):
            return value
    return cell


def _json_cell(cell: str, field: str, where: str) -> Any:
    try:
        return json.loads(cell)
    except json.JSONDecodeError as exc:
        listed = (*LIST_FIELDS, *TOOL_FIELDS, "turns")
        shape = "a JSON list" if field in listed else "a JSON object"
        raise DatasetError(
            f"{where}: field '{field}': expected {shape} in the cell, got invalid JSON ({exc.msg})"
        ) from None


__all__ = ["read_csv", "write_csv"]
