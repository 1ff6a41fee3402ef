"""The ``hf`` folder: a dataset as ``datasets`` saves it, as parquet shards, and with its card.

docs/sharing.md draws the folder: the card (``README.md``, :mod:`synth.dataset._card`),
``synth_run.json``, the parquet shards under ``data/`` and what ``save_to_disk`` writes. The
shards carry the ``huggingface`` features and synth's header in their schema metadata, so they
are also synth ``.parquet`` files; the card's ``configs`` names them, so a pushed repository
loads with ``load_dataset("user/name")``. ``load_dataset`` keeps neither schema metadata nor a
description, hence ``synth_run.json`` (the Hub keeps it as it is).

Reading takes the shards when there are any (pyarrow alone), else the ``save_to_disk`` output
(needs ``datasets``); the metadata comes from ``synth_run.json`` when there is one, else from the
shards or the ``save_to_disk`` output. The folder is built beside the target and renamed into
place: a failed export leaves no folder, or the previous one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from synth.data import Golden
from synth.dataset._hf import (
    from_hf,
    goldens_from_rows,
    header_text,
    metadata_from_header,
    quiet,
    require,
    to_hf,
)
from synth.dataset._io import FORMAT_NAME, read_text
from synth.errors import ConfigError, DatasetError

DATA_FOLDER = "data"
SHARD_PATTERN = f"{DATA_FOLDER}/train-*.parquet"
CARD = "README.md"
#: the dataset's metadata as a file of its own (synth's header), kept by the Hub as it is
RUN_FILE = "synth_run.json"
#: what ``save_to_disk`` writes at the top of the folder: a Dataset's, a DatasetDict's
DISK_STATE = "state.json"
DISK_SPLITS = "dataset_dict.json"
#: rows per parquet shard (the Hub's viewer and ``load_dataset`` stream shards of this size well)
SHARD_ROWS = 100_000
_SCHEMA_KEY = b"synth"


def is_hf_folder(path: Path) -> bool:
    """Whether ``path`` is a folder holding parquet shards or ``save_to_disk`` output."""
    return path.is_dir() and (bool(_shards(path)) or _saved_to_disk(path))


def _saved_to_disk(folder: Path) -> bool:
    return any((folder / marker).is_file() for marker in (DISK_STATE, DISK_SPLITS))


def _shards(folder: Path) -> list[Path]:
    return sorted(folder.glob(SHARD_PATTERN))


# ---- writing -------------------------------------------------------------------------------------
def write_hf_folder(
    path: Path,
    goldens: Sequence[Golden],
    metadata: Mapping[str, Any],
    card: str,
    publish: Callable[[Path], object] | None = None,
) -> Path:
    """Write the folder (save_to_disk output, shards, ``synth_run.json``, ``card`` as README.md);
    return its path.

    ``publish`` is called with the finished folder before it takes ``path``'s place (to push it
    to the Hub): when it raises, nothing is written.
    """
    _check_target(path)
    table = to_hf(goldens, metadata, str(path))
    with _folder_swap(path) as tmp:
        with quiet():  # datasets writes no arrow file for an empty table unless told one
            table.save_to_disk(str(tmp), num_shards=1 if table.num_rows == 0 else None)
        header = header_text(metadata)
        _write_shards(table, tmp, header.encode("utf-8"))
        (tmp / RUN_FILE).write_text(header + "\n", encoding="utf-8")
        (tmp / CARD).write_text(card, encoding="utf-8")
        if publish is not None:
            publish(tmp)
    return path


def _check_target(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{path}: is a file; an hf dataset is a folder (name a new one with -o)")
    if path.is_dir() and any(path.iterdir()) and not is_hf_folder(path):
        raise ConfigError(
            f"{path}: is a folder holding other files; name a new or empty folder with -o"
        )


def _write_shards(table: Any, folder: Path, header: bytes) -> None:
    pq = require("pyarrow.parquet")
    arrow = table.data.table
    arrow = arrow.replace_schema_metadata({**(arrow.schema.metadata or {}), _SCHEMA_KEY: header})
    count = max(1, -(-arrow.num_rows // SHARD_ROWS))
    (folder / DATA_FOLDER).mkdir()
    for index in range(count):
        shard = arrow.slice(index * SHARD_ROWS, SHARD_ROWS)
        pq.write_table(shard, folder / DATA_FOLDER / f"train-{index:05d}-of-{count:05d}.parquet")


@contextlib.contextmanager
def _folder_swap(path: Path) -> Iterator[Path]:
    """Yield a new folder beside ``path``; when the block succeeds it replaces ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    old = path.with_name(f".{path.name}.{os.getpid()}.old")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        yield tmp
        if path.exists():
            os.replace(path, old)
        os.replace(tmp, path)
    except BaseException:
        if old.exists() and not path.exists():
            os.replace(old, path)  # the previous export back where it was
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


# ---- reading -------------------------------------------------------------------------------------
def read_hf_folder(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    """The goldens and metadata of an hf folder: its shards, else its ``save_to_disk`` output;
    the metadata from its ``synth_run.json`` when it has one."""
    shards = _shards(path)
    if shards:
        goldens, metadata = _read_shards(path, shards)
    elif _saved_to_disk(path):
        goldens, metadata = _read_disk(path)
    else:
        raise DatasetError(
            f"{path}: is a folder, but no dataset: no {SHARD_PATTERN} shards and no save_to_disk "
            f"output ({DISK_STATE} or {DISK_SPLITS})"
        )
    run = _read_run_file(path / RUN_FILE)
    return goldens, metadata if run is None else run


def _read_run_file(file: Path) -> dict[str, Any] | None:
    """The metadata in ``synth_run.json``; None when there is no such file."""
    if not file.is_file():
        return None
    metadata = metadata_from_header(read_text(file), str(file))
    if metadata is None:
        raise DatasetError(f'{file}: not synth\'s run file (no "format": "{FORMAT_NAME}")')
    return metadata


def _read_shards(path: Path, shards: list[Path]) -> tuple[list[Golden], dict[str, Any]]:
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    metadata: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    for shard in shards:
        try:
            table = pq.read_table(shard)
        except (pa.ArrowException, OSError) as exc:
            raise DatasetError(f"{shard}: not a readable parquet file: {exc}") from None
        raw = (table.schema.metadata or {}).get(_SCHEMA_KEY)
        if metadata is None and raw is not None:
            metadata = metadata_from_header(raw.decode("utf-8", "replace"), str(shard))
        rows.extend(table.to_pylist())
    return goldens_from_rows(iter(rows), str(path)), metadata or {}


def _read_disk(path: Path) -> tuple[list[Golden], dict[str, Any]]:
    ds = require("datasets")
    try:
        table = ds.load_from_disk(str(path))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: not a readable save_to_disk folder: {exc}") from None
    if isinstance(table, ds.DatasetDict):
        if len(table) != 1:
            raise DatasetError(
                f"{path}: holds the splits {', '.join(table)}; load one with "
                f"Dataset.from_hf(datasets.load_from_disk(...)[split])"
            )
        table = next(iter(table.values()))
    return from_hf(table, where=str(path))


__all__ = [
    "CARD",
    "DATA_FOLDER",
    "RUN_FILE",
    "SHARD_PATTERN",
    "is_hf_folder",
    "read_hf_folder",
    "write_hf_folder",
]
