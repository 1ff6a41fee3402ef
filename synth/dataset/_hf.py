"""Goldens to and from a Hugging Face ``datasets.Dataset`` (needs ``pip install 'synth[hf]'``).

One typed column per :class:`~synth.data.Golden` field (docs/sharing.md, "The columns"): the
text fields ``Value("string")``, the list fields ``List(Value("string"))`` (null and ``[]``
distinct), ``metadata``, ``turns`` and any field ``Golden`` grows later JSON text, which keeps
each value exactly where an Arrow struct cannot; the conversation columns when one golden is a
conversation. ``datasets``' own ``Json`` feature goes through ``ujson``, which does not keep every
float and integer exactly, and older readers do not know it.

The dataset's own metadata travels as synth's JSON header in ``Dataset.info.description``; the
parquet shards of an ``hf`` folder carry it in their schema metadata, and the folder in
``synth_run.json``, which is what survives ``load_dataset`` (:mod:`synth.dataset._hf_folder`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from synth.data import Golden
from synth.dataset._io import FORMAT_NAME, FORMAT_VERSION, check_version, dumps, dumps_records
from synth.dataset._records import (
    CONVERSATION_FIELDS,
    CONVERSATION_TEXT_FIELDS,
    LIST_FIELDS,
    STRING_FIELDS,
    columns_of,
    golden_from_record,
    kind,
    to_synth,
)
from synth.errors import ConfigError, DatasetError

if TYPE_CHECKING:
    import datasets

#: the fields stored as JSON text: ``metadata``, and any Golden field with no typed column here
JSON_FIELDS: tuple[str, ...] = tuple(
    name
    for name in (*Golden.model_fields, *CONVERSATION_FIELDS)
    if name not in (*STRING_FIELDS, *LIST_FIELDS, *CONVERSATION_TEXT_FIELDS)
)
INSTALL_HINT = "pip install 'synth[hf]'"


def require(module: str) -> ModuleType:
    """Import ``datasets`` or ``huggingface_hub``; a ConfigError naming the extra when missing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        package = module.split(".")[0]
        raise ConfigError(
            f"Hugging Face datasets need the {package} package: {INSTALL_HINT}"
        ) from None


def hf_features(goldens: Sequence[Golden] = ()) -> datasets.Features:
    """The typed columns of a table of ``goldens``, in the order of their fields."""
    ds = require("datasets")
    columns: dict[str, Any] = {}
    for name in columns_of(goldens):
        if name in LIST_FIELDS:
            columns[name] = ds.List(ds.Value("string"))
        else:  # a string field, or JSON text
            columns[name] = ds.Value("string")
    return ds.Features(columns)


def header_text(metadata: Mapping[str, Any]) -> str:
    """synth's header of a dataset's metadata, as JSON text (what ``info.description`` holds)."""
    return dumps({"format": FORMAT_NAME, "version": FORMAT_VERSION, "metadata": dict(metadata)})


def metadata_from_header(text: str | None, where: str) -> dict[str, Any] | None:
    """The metadata in a header made by :func:`header_text`; None when ``text`` is no such header
    (a description someone else wrote)."""
    if not text:
        return None
    try:
        header = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        return None
    check_version(header, Path(where))
    metadata = header.get("metadata", {})
    if not isinstance(metadata, dict):
        raise DatasetError(f"{where}: field 'metadata': expected an object, got {kind(metadata)}")
    return metadata


def hf_records(goldens: Sequence[Golden], where: str) -> list[dict[str, Any]]:
    """The goldens as rows of the table: JSON fields encoded as text."""
    records = [to_synth(golden) for golden in goldens]
    dumps_records(records, Path(where))  # a value JSON cannot hold is reported by golden and field
    for record in records:
        for name in JSON_FIELDS:
            if record.get(name) is not None or name == "metadata":
                record[name] = dumps(record.get(name))
    return records


def to_hf(
    goldens: Sequence[Golden], metadata: Mapping[str, Any], where: str = "a Hugging Face dataset"
) -> datasets.Dataset:
    """The goldens as a ``datasets.Dataset`` with typed features; metadata in its description.
    ``where`` names what is made in the error on a value JSON cannot hold (the folder, when one
    is written)."""
    ds = require("datasets")
    features = hf_features(goldens)
    info = ds.DatasetInfo(description=header_text(metadata), features=features)
    records = hf_records(goldens, where)
    columns = {name: [record.get(name) for record in records] for name in features}
    with quiet():  # by columns, so that no goldens is still a table with every column
        return ds.Dataset.from_dict(columns, features=features, info=info)


def from_hf(
    table: datasets.Dataset, metadata: Mapping[str, Any] | None = None, where: str = "dataset"
) -> tuple[list[Golden], dict[str, Any]]:
    """The goldens of a ``datasets.Dataset`` and its metadata.

    ``metadata`` defaults to the header :func:`to_hf` put in the description, else empty. Columns
    are read by name, so a table from another tool (ragas column names) is read as a file would be.
    """
    if metadata is None:
        info = getattr(table, "info", None)
        metadata = metadata_from_header(getattr(info, "description", None), where) or {}
    return goldens_from_rows(_rows(table), where), dict(metadata)


def _rows(table: Any) -> Iterator[dict[str, Any]]:
    try:
        yield from iter(table)
    except TypeError:
        raise ConfigError(f"expected a datasets.Dataset, got {kind(table)}") from None


def goldens_from_rows(rows: Iterator[Mapping[str, Any]], where: str) -> list[Golden]:
    """Each row of a table a golden; JSON fields decoded, errors naming the row's index."""
    goldens = []
    for index, row in enumerate(rows):
        at = f"{where}: index {index}"
        if not isinstance(row, Mapping):
            raise DatasetError(f"{at}: expected a row with a golden's fields, got {kind(row)}")
        record = dict(row)
        for name in JSON_FIELDS:
            record[name] = _decoded(record.get(name), name, at)
            if name not in row:
                del record[name]
        goldens.append(golden_from_record(record, at))
    return goldens


def _decoded(value: object, name: str, where: str) -> object:
    if not isinstance(value, str):
        return value  # null (a default), or already decoded by the reader
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: field '{name}': expected JSON text ({exc.msg})") from None


@contextmanager
def quiet() -> Iterator[None]:
    """Without ``datasets``' progress bars (synth says what it wrote in its own line)."""
    from datasets import utils

    was_enabled = not utils.are_progress_bars_disabled()
    utils.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            utils.enable_progress_bars()


__all__ = [
    "INSTALL_HINT",
    "JSON_FIELDS",
    "from_hf",
    "goldens_from_rows",
    "header_text",
    "hf_features",
    "hf_records",
    "metadata_from_header",
    "quiet",
    "require",
    "to_hf",
]
