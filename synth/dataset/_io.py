"""File helpers shared by the dataset formats: reading text, atomic writes, strict JSON, sidecars.

Every write goes through synth's one atomic writer (:mod:`synth._files`).

Formats with one golden per line or row (``.jsonl``, ``.csv``) keep the dataset's metadata in a
sidecar next to the file, ``<file name>.meta.json`` (``goldens.jsonl`` -> ``goldens.jsonl.meta.json``),
so every line of the data file is a golden for any tool that reads it line by line. A missing
sidecar means empty metadata.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from synth._files import atomic_path, write_atomic
from synth.errors import DatasetError

#: written in .json datasets and sidecars, checked when reading
FORMAT_NAME = "synth-dataset"
SIDECAR_FORMAT = "synth-dataset-metadata"
FORMAT_VERSION = 1

_JSON_TYPES_HINT = "only strings, numbers (not NaN or infinity), booleans, null, lists and objects"


def read_text(path: Path) -> str:
    """The file's text, decoded as UTF-8 (a byte-order mark is dropped)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a folder, not a dataset file") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (bad byte at offset {exc.start})") from None


def loads(text: str, path: Path) -> Any:
    """Parse a whole JSON file; a syntax error names its line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"
        ) from None


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Strict JSON text: unicode kept as is, NaN and infinity refused."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=indent)


def dumps_records(records: Sequence[Mapping[str, Any]], path: Path) -> list[str]:
    """Each record as one line of JSON; a value JSON cannot hold names its golden and field.

    U+2028 and U+2029 are escaped so that readers splitting on any line break still see one golden
    per line.
    """
    lines = []
    for index, record in enumerate(records):
        try:
            line = dumps(record)
        except (TypeError, ValueError) as exc:
            raise _unwritable(record, f"{path}: index {index}", exc) from None
        lines.append(line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return lines


def dumps_value(value: Any, path: Path, records: Sequence[Mapping[str, Any]]) -> str:
    """A whole JSON document, indented; on failure, find the golden among ``records`` to blame."""
    try:
        return dumps(value, indent=2)
    except (TypeError, ValueError):
        dumps_records(records, path)  # raises, naming the golden and the field
        raise


def check_metadata(metadata: Mapping[str, Any], path: Path) -> None:
    """Raise DatasetError if the dataset's metadata cannot be written as JSON."""
    try:
        dumps(metadata)
    except (TypeError, ValueError) as exc:
        raise DatasetError(
            f"cannot save {path}: the dataset's metadata cannot be written as JSON ({exc}); "
            f"it may hold {_JSON_TYPES_HINT}"
        ) from None


def _unwritable(record: Mapping[str, Any], where: str, exc: Exception) -> DatasetError:
    field = "?"
    for name, value in record.items():
        try:
            dumps(value)
        except (TypeError, ValueError):
            field = name
            break
    return DatasetError(
        f"cannot save {where}: field '{field}' cannot be written as JSON ({exc}); "
        f"it may hold {_JSON_TYPES_HINT}"
    )


# ---- the metadata sidecar ------------------------------------------------------------------------
def sidecar_path(path: Path) -> Path:
    """Where the metadata of a ``.jsonl`` or ``.csv`` dataset lives."""
    return path.with_name(path.name + ".meta.json")


def write_sidecar(path: Path, metadata: Mapping[str, Any]) -> None:
    document = {
        "format": SIDECAR_FORMAT,
        "version": FORMAT_VERSION,
        "dataset": path.name,
        "metadata": dict(metadata),
    }
    write_atomic(sidecar_path(path), dumps(document, indent=2) + "\n")


def read_sidecar(path: Path) -> dict[str, Any]:
    """The dataset metadata kept next to ``path``; empty when there is no sidecar."""
    sidecar = sidecar_path(path)
    if not sidecar.is_file():
        return {}
    document = loads(read_text(sidecar), sidecar)
    if not isinstance(document, dict) or document.get("format") != SIDECAR_FORMAT:
        raise DatasetError(
            f'{sidecar}: not a synth metadata sidecar (no "format": "{SIDECAR_FORMAT}")'
        )
    check_version(document, sidecar)
    metadata = document.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(f"{sidecar}: field 'metadata': expected an object")
    return metadata


def check_version(document: Mapping[str, Any], path: Path) -> None:
    version = document.get("version", FORMAT_VERSION)
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise DatasetError(
            f"{path}: field 'version': {version!r} is not a format version this synth reads "
            f"(up to {FORMAT_VERSION}); upgrade synth"
        )


__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "SIDECAR_FORMAT",
    "atomic_path",
    "check_metadata",
    "check_version",
    "dumps",
    "dumps_records",
    "dumps_value",
    "loads",
    "read_sidecar",
    "read_text",
    "sidecar_path",
    "write_sidecar",
]
