"""The ``.parquet`` dataset file (needs pyarrow: ``pip install 'synth[parquet]'``).

Text fields are nullable string columns and list fields nullable ``list<string>`` columns, so null,
the empty string and the empty list stay distinct; ``metadata`` is a JSON string column (its values
have no fixed shape). Conversational goldens add ``scenario``, ``expected_outcome`` and
``user_description`` string columns and ``turns``, a JSON string column. The dataset's metadata is JSON under the ``synth`` key of the file's schema
metadata. Other tools' parquet files (a ragas table saved with pandas) are read by their column
names. Errors name the golden by its index.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from synth._files import atomic_path
from synth.data import Golden
from synth.dataset._io import (
    FORMAT_NAME,
    FORMAT_VERSION,
    check_version,
    dumps,
    dumps_records,
)
from synth.dataset._records import (
    CONVERSATION_FIELDS,
    CONVERSATION_TEXT_FIELDS,
    LIST_FIELDS,
    TOOL_FIELDS,
    columns_of,
    golden_from_record,
    kind,
    to_synth,
)
from synth.errors import ConfigError, DatasetError

_SCHEMA_KEY = b"synth"
#: the columns that hold JSON text
_JSON_COLUMNS = ("metadata", "turns", *TOOL_FIELDS)


def _pyarrow() -> tuple[ModuleType, ModuleType]:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(
            ".parquet datasets need pyarrow: pip install 'synth[parquet]' "
            "(or save as .json, .jsonl or .csv)"
        ) from None
    return pyarrow, pyarrow.parquet


def write_parquet(path: Path, goldens: Sequence[Golden], metadata: Mapping[str, Any]) -> None:
    pa, pq = _pyarrow()
    records = [to_synth(golden) for golden in goldens]
    dumps_records(records, path)  # a value JSON cannot hold is reported by golden and field
    for record in records:
        record["metadata"] = dumps(record["metadata"])
        for name in ("turns", *TOOL_FIELDS):
            if record.get(name) is not None:
                record[name] = dumps(record[name])
    text, strings = pa.string(), pa.list_(pa.string())
    fields = [
        pa.field("input", text, nullable=False),
        pa.field("actual_output", text),
        pa.field("expected_output", text),
        *(pa.field(name, strings) for name in LIST_FIELDS),
        pa.field("metadata", text, nullable=False),
        *(pa.field(name, text) for name in TOOL_FIELDS if name in columns_of(goldens)),
    ]
    if columns_of(goldens)[-1] == CONVERSATION_FIELDS[-1]:
        fields.extend(pa.field(name, text) for name in (*CONVERSATION_TEXT_FIELDS, "turns"))
    schema = pa.schema(fields)
    header = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "metadata": dict(metadata)}
    schema = schema.with_metadata({_SCHEMA_KEY: dumps(header).encode("utf-8")})
    table = pa.Table.from_pylist(records, schema=schema)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


def read_parquet(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    pa, pq = _pyarrow()
    if path.is_dir():
        raise DatasetError(f"{path}: is a folder, not a dataset file")
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise DatasetError(f"{path}: not a readable parquet file: {exc}") from None
    metadata = _dataset_metadata(table.schema.metadata or {}, path)
    goldens = []
    for index, row in enumerate(table.to_pylist()):
        where = f"{path}: index {index}"
        for name in _JSON_COLUMNS:
            raw = row.get(name)
            if isinstance(raw, str):
                try:
                    row[name] = json.loads(raw)
                except json.JSONDecodeError as exc:
                    shape = "a JSON object" if name == "metadata" else "a JSON list"
                    raise DatasetError(
                        f"{where}: field '{name}': expected {shape}, got invalid JSON ({exc.msg})"
                    ) from None
        goldens.append(golden_from_record(row, where))
    return goldens, metadata


def _dataset_metadata(schema_metadata: Mapping[bytes, bytes], path: Path) -> dict[str, Any]:
    raw = schema_metadata.get(_SCHEMA_KEY)
    if raw is None:
        return {}
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise DatasetError(f"{path}: the 'synth' schema metadata is not valid JSON") from None
    if not isinstance(header, dict):
        raise DatasetError(f"{path}: the 'synth' schema metadata is {kind(header)}, not an object")
    check_version(header, path)
    metadata = header.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(f"{path}: field 'metadata': expected an object, got {kind(metadata)}")
    return metadata


__all__ = ["read_parquet", "write_parquet"]
