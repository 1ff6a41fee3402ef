"""deepeval's CSV: one golden per row, as ``EvaluationDataset.add_goldens_from_csv_file`` reads it.

deepeval reads it with ``pandas.read_csv``'s defaults and splits the list cells on ``|``, which a
context may hold, so list items are joined with :data:`SEPARATOR` (U+001F) and the loading call
names it (docs/dataset.md, "deepeval's CSV"). ``source_file`` is the first of ``source_files``;
``additional_metadata`` (JSON) holds the golden's ``metadata`` plus ``_synth`` with ``context_ids``
and ``source_files``. Before anything is written the text is read back as deepeval reads it, and
a cell that would come back different is refused with the golden and the field named.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth._files import write_atomic
from synth.data import Golden
from synth.dataset._deepeval_saved import DEEPEVAL_SEPARATOR  # for files synth did not write
from synth.dataset._io import dumps, dumps_records
from synth.dataset._records import SYNTH_KEY, kind
from synth.errors import DatasetError

#: joins the items of ``context`` and ``retrieval_context`` in one cell
SEPARATOR = "\x1f"

TEXT_COLUMNS = ("input", "actual_output", "expected_output")
LIST_COLUMNS = ("context", "retrieval_context")
#: a header with one of these is deepeval's CSV, not synth's
MARKER_COLUMNS = frozenset({"source_file", "additional_metadata"})
_CONVERSATION_TEXT = ("scenario", "expected_outcome", "user_description")
#: the columns read into a golden's own fields (the others ride in its metadata)
_READ_COLUMNS = frozenset(
    {*TEXT_COLUMNS, *LIST_COLUMNS, *MARKER_COLUMNS, *_CONVERSATION_TEXT, "turns"}
)


def write_deepeval_csv(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """Write deepeval ``Golden`` records (from :func:`to_deepeval`) as deepeval's CSV.

    Raises DatasetError, writing nothing, when deepeval would read any cell back differently.
    """
    dumps_records(records, path)  # a value JSON cannot hold is reported by golden and field
    lists = [c for c in LIST_COLUMNS if any(r[c] is not None for r in records)]
    columns = [*TEXT_COLUMNS, *lists, "source_file", "additional_metadata"]
    rows = []
    for index, record in enumerate(records):
        where = f"cannot export {path} as deepeval CSV: index {index}"
        row = [_text_cell(record[c]) for c in TEXT_COLUMNS]
        row += [_list_cell(record[c], c, where) for c in lists]
        row += [_text_cell(record["source_file"]), dumps(record["additional_metadata"])]
        rows.append(row)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(columns)
    writer.writerows(rows)
    text = buffer.getvalue()
    _check_read_back(text, columns, records, path)
    write_atomic(path, text)


def _text_cell(value: str | None) -> str:
    return "" if value is None else value


def _list_cell(items: list[str] | None, column: str, where: str) -> str:
    if items is None:
        raise DatasetError(
            f"{where}: field '{column}' is null but other goldens have one, and deepeval reads "
            f"an empty '{column}' cell as []; export as deepeval JSON (--format deepeval)"
        )
    for position, item in enumerate(items):
        if SEPARATOR in item:
            raise DatasetError(
                f"{where}: field '{column}' item {position} holds the separator U+001F; "
                "export as deepeval JSON (--format deepeval)"
            )
    return SEPARATOR.join(items)


def _check_read_back(
    text: str, columns: list[str], records: Sequence[Mapping[str, Any]], path: Path
) -> None:
    """Read ``text`` as deepeval does and raise on the first cell that differs from its golden."""
    import pandas as pd

    frame = pd.read_csv(io.StringIO(text))  # deepeval's call: pandas' defaults
    for index, (record, values) in enumerate(
        zip(records, frame.itertuples(index=False, name=None), strict=True)
    ):
        cells = dict(zip(columns, values, strict=True))
        for column in columns:
            read = _missing_as_none(cells[column])
            if column in LIST_COLUMNS:
                read = read.split(SEPARATOR) if isinstance(read, str) else []
                wrote = record[column]
            elif column == "additional_metadata":
                read = json.loads(read) if isinstance(read, str) else read
                wrote = record[column]
            else:
                wrote = record[column]
            if read != wrote:
                raise DatasetError(
                    f"cannot export {path} as deepeval CSV: index {index}: field '{column}' "
                    f"would be read by deepeval as {_shown(read)}, not {_shown(wrote)}; "
                    "export as deepeval JSON (--format deepeval)"
                )


def _missing_as_none(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return value.item()  # a numpy scalar: a column pandas took for numbers
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- reading it back (Dataset.load of a .csv with deepeval's columns) --------------------------
def read_deepeval_rows(rows: Any, header: list[str], path: Path) -> list[Golden]:
    """The goldens of a deepeval CSV, read as deepeval reads it (``rows`` after the header).

    Rows whose ``additional_metadata`` carries synth's ``_synth`` block were written by synth:
    their lists are split on :data:`SEPARATOR`; other rows on deepeval's ``|``. A row whose
    ``scenario`` is set is a conversation (deepeval's ``save_as("csv")`` of conversational goldens:
    ``turns`` as JSON, empty until played out). The other cells deepeval writes (``name``,
    ``comments``, ``token_cost``...) are kept, as text, in the golden's metadata when not empty.
    """
    from synth.dataset._records import golden_from_record

    columns = [name.strip() for name in header]
    if "input" not in columns and "scenario" not in columns:
        raise DatasetError(f"{path}: row 1: missing column 'input'")
    goldens = []
    for row_number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path}: row {row_number}"
        if len(row) > len(columns):
            raise DatasetError(
                f"{where}: has {len(row)} cells but the header has {len(columns)} columns"
            )
        cells = dict(zip(columns, row, strict=False))
        record: dict[str, Any] = {
            c: cells.get(c) or None for c in (*TEXT_COLUMNS, "source_file") if c in columns
        }
        if cells.get("scenario"):
            record = _conversation_cells(cells, where)
        metadata = _metadata_cell(cells.get("additional_metadata", ""), where)
        separator = SEPARATOR if SYNTH_KEY in metadata else DEEPEVAL_SEPARATOR
        for column in LIST_COLUMNS:
            if column in columns:
                cell = cells.get(column, "")
                record[column] = cell.split(separator) if cell else []
        record["additional_metadata"] = metadata
        for column in columns:  # deepeval's other columns: kept when set
            if column not in _READ_COLUMNS and cells.get(column):
                record[column] = cells[column]
        if record.get("input") is None and "scenario" not in record:
            raise DatasetError(f"{where}: field 'input': missing (every golden needs one)")
        goldens.append(golden_from_record(record, where))
    return goldens


def _conversation_cells(cells: Mapping[str, str], where: str) -> dict[str, Any]:
    """The fields of a conversation row: text cells, and its ``turns`` parsed (null when empty)."""
    record: dict[str, Any] = {c: cells.get(c) or None for c in _CONVERSATION_TEXT}
    turns = cells.get("turns", "")
    if turns.strip():
        try:
            record["turns"] = json.loads(turns)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{where}: field 'turns': expected a JSON list in the cell, got invalid JSON "
                f"({exc.msg})"
            ) from None
    return record


def _metadata_cell(cell: str, where: str) -> dict[str, Any]:
    if not cell.strip():
        return {}
    try:
        value = json.loads(cell)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{where}: field 'additional_metadata': expected a JSON object in the cell, "
            f"got invalid JSON ({exc.msg})"
        ) from None
    if not isinstance(value, dict):
        raise DatasetError(
            f"{where}: field 'additional_metadata': expected a JSON object, got {kind(value)}"
        )
    return value


__all__ = [
    "DEEPEVAL_SEPARATOR",
    "MARKER_COLUMNS",
    "SEPARATOR",
    "read_deepeval_rows",
    "write_deepeval_csv",
]
