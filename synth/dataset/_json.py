"""The ``.json`` and ``.jsonl`` dataset files, synth's own and other tools'.

``.json``: one object ``{"format": "synth-dataset", "version": 1, "metadata": {...},
"goldens": [...]}``. Reading also accepts a plain list of goldens (deepeval's goldens JSON, a
list of ragas rows) and judgeval's ``{"examples": [...]}``. Errors name the golden by its index.

``.jsonl``: one golden per line with its fields at the top level; the dataset's metadata is in
the ``<name>.meta.json`` sidecar. Blank lines are skipped. Errors name the line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth._files import write_atomic
from synth.data import Golden
from synth.dataset._io import (
    FORMAT_NAME,
    FORMAT_VERSION,
    SIDECAR_FORMAT,
    check_version,
    dumps_records,
    dumps_value,
    loads,
    read_sidecar,
    read_text,
    write_sidecar,
)
from synth.dataset._records import golden_from_record, kind, to_synth
from synth.errors import DatasetError


# ---- .json ---------------------------------------------------------------------------------------
def write_json(path: Path, goldens: Sequence[Golden], metadata: Mapping[str, Any]) -> None:
    records = [to_synth(golden) for golden in goldens]
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "metadata": dict(metadata),
        "goldens": records,
    }
    write_atomic(path, dumps_value(document, path, records) + "\n")


def write_json_value(path: Path, value: Any, records: Sequence[Mapping[str, Any]]) -> None:
    """Write any JSON document (an export); ``records`` are its goldens, to blame on failure."""
    write_atomic(path, dumps_value(value, path, records) + "\n")


def read_json(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    document = loads(read_text(path), path)
    if isinstance(document, list):
        return _goldens(document, path, "index"), {}
    if isinstance(document, dict):
        if "goldens" in document:
            return _read_synth(document, path)
        if "examples" in document:  # judgeval's EvalDataset JSON
            return _goldens(_list_field(document, "examples", path), path, "examples index"), {}
        if document.get("format") == SIDECAR_FORMAT:
            raise DatasetError(
                f"{path}: is the metadata sidecar of {document.get('dataset')!r}; load that file"
            )
        keys = ", ".join(repr(key) for key in list(document)[:6]) or "none"
        raise DatasetError(
            f'{path}: expected a synth dataset ({{"goldens": [...]}}), a judgeval file '
            f'({{"examples": [...]}}) or a list of goldens; found an object with keys {keys}'
        )
    raise DatasetError(f"{path}: expected an object or a list of goldens, got {kind(document)}")


def _read_synth(document: dict[str, Any], path: Path) -> tuple[list[Golden], dict[str, Any]]:
    check_version(document, path)
    metadata = document.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise DatasetError(f"{path}: field 'metadata': expected an object, got {kind(metadata)}")
    return _goldens(_list_field(document, "goldens", path), path, "index"), metadata


def _list_field(document: Mapping[str, Any], name: str, path: Path) -> list[Any]:
    value = document[name]
    if not isinstance(value, list):
        raise DatasetError(f"{path}: field '{name}': expected a list, got {kind(value)}")
    return value


def _goldens(records: list[Any], path: Path, noun: str) -> list[Golden]:
    return [golden_from_record(record, f"{path}: {noun} {i}") for i, record in enumerate(records)]


# ---- .jsonl --------------------------------------------------------------------------------------
def write_jsonl(path: Path, goldens: Sequence[Golden], metadata: Mapping[str, Any]) -> None:
    write_jsonl_records(path, [to_synth(golden) for golden in goldens])
    write_sidecar(path, metadata)


def write_jsonl_records(path: Path, records: Sequence[Mapping[str, Any]]) -> None:
    """One JSON object per line (an export, or synth's own rows)."""
    write_atomic(path, "".join(line + "\n" for line in dumps_records(records, path)))


def read_jsonl(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    goldens = []
    # split on "\n" only: JSON text never holds a raw line break, but may hold U+2028
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        goldens.append(golden_from_record(record, where))
    return goldens, read_sidecar(path)


__all__ = [
    "read_json",
    "read_jsonl",
    "write_json",
    "write_json_value",
    "write_jsonl",
    "write_jsonl_records",
]
