"""Writing a reviewed dataset back to its own file (folding the review journal into it).

Only the goldens a decision changed are serialised again: the writer keeps every golden's
serialised text (a *piece*) and joins the cached pieces into the new file, written with synth's
one atomic writer (temporary file, fsync, rename, folder fsync). ``.jsonl`` pieces are lines;
``.json`` pieces are the goldens indented as :meth:`Dataset.save` indents them, so the file is byte
for byte what ``save`` would write. ``.csv`` and ``.parquet`` have no cheap piece: they are
written whole by their format's writer (atomic too, just slower on big files).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from synth._files import write_atomic
from synth.data import Golden
from synth.dataset import SUFFIXES
from synth.dataset._csv import write_csv
from synth.dataset._io import FORMAT_NAME, FORMAT_VERSION, check_metadata, dumps, dumps_records
from synth.dataset._parquet import write_parquet
from synth.dataset._records import to_synth
from synth.errors import ConfigError


class DatasetWriter(Protocol):
    """How one file format caches goldens' serialised text and writes the file from it."""

    def piece(self, golden: Golden) -> str:
        """The golden's serialised text, as it will stand in the file."""
        ...

    def write(
        self, goldens: Sequence[Golden], pieces: Sequence[str], metadata: Mapping[str, Any]
    ) -> None:
        """Replace the file atomically with these goldens (``pieces`` are their texts)."""
        ...


class _LinesWriter:
    """``.jsonl``: one line per golden; the metadata sidecar is not touched (a review leaves the
    dataset's metadata as it is)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def piece(self, golden: Golden) -> str:
        return dumps_records([to_synth(golden)], self.path)[0]

    def write(
        self, goldens: Sequence[Golden], pieces: Sequence[str], metadata: Mapping[str, Any]
    ) -> None:
        write_atomic(self.path, "".join(line + "\n" for line in pieces))


class _DocumentWriter:
    """``.json``: the synth document, the goldens' indented texts joined into it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def piece(self, golden: Golden) -> str:
        record = to_synth(golden)
        dumps_records([record], self.path)  # a value JSON cannot hold: blame its field
        return textwrap.indent(dumps(record, indent=2), "    ")

    def write(
        self, goldens: Sequence[Golden], pieces: Sequence[str], metadata: Mapping[str, Any]
    ) -> None:
        head = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "metadata": dict(metadata)}
        opening = dumps(head, indent=2).removesuffix("\n}")
        body = "[\n" + ",\n".join(pieces) + "\n  ]" if pieces else "[]"
        write_atomic(self.path, f'{opening},\n  "goldens": {body}\n}}\n')


class _WholeWriter:
    """``.csv`` and ``.parquet``: the format's own writer, the whole file each time (what
    :meth:`Dataset.save` does, without removing the journal: the store prunes it itself)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def piece(self, golden: Golden) -> str:
        return ""

    def write(
        self, goldens: Sequence[Golden], pieces: Sequence[str], metadata: Mapping[str, Any]
    ) -> None:
        check_metadata(metadata, self.path)
        if self.path.suffix.lower() == ".csv":
            write_csv(self.path, goldens, metadata)
        else:
            write_parquet(self.path, goldens, metadata)


def writer_for(path: Path) -> DatasetWriter:
    """The writer of ``path``'s format (by suffix); ConfigError for a suffix synth cannot save."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _LinesWriter(path)
    if suffix == ".json":
        return _DocumentWriter(path)
    if suffix in SUFFIXES:
        return _WholeWriter(path)
    raise ConfigError(
        f"{path}: synth review saves decisions into the dataset itself, in one of "
        f"{', '.join(SUFFIXES)}; convert it first with synth export"
    )


__all__ = ["DatasetWriter", "writer_for"]
