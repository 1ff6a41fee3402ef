"""The review server's one state: the dataset's goldens, changed one at a time under a lock and
written back to the dataset file before a change is answered.

Every browser tab talks to the same :class:`ReviewStore`, and every request changes one golden, so
two tabs never overwrite each other's work: the last decision on a golden wins and every other
golden keeps its own. A change is in memory only once it is on disk; if the write fails, the
golden is as it was and the request gets the error. If the file is changed behind the server's
back (another ``synth review``, an editor, ``synth refill``), the next change is refused rather than
overwriting it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from synth.data import Golden
from synth.dataset import Dataset
from synth.dataset.review import decide, edit, golden_key
from synth.errors import DatasetError
from synth.review._files import writer_for


class UnknownGoldenError(DatasetError, LookupError):
    """A request named a golden the dataset does not hold."""


class DatasetChangedError(DatasetError):
    """The dataset file changed on disk since the review server read or last wrote it."""


def unique_keys(goldens: list[Golden]) -> list[str]:
    """Each golden's :func:`golden_key`; a key seen before gets ``~2``, ``~3``... (copies of one
    golden in a file are still reviewed one by one)."""
    seen: dict[str, int] = {}
    keys = []
    for golden in goldens:
        key = golden_key(golden)
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key}~{seen[key]}")
    return keys


class ReviewStore:
    """A dataset file under review: read once, every decision written back at once."""

    def __init__(self, path: str | os.PathLike[str], *, reviewer: str) -> None:
        self.path = Path(path)
        self.reviewer = reviewer
        self._writer = writer_for(self.path)
        dataset = Dataset.load(self.path)
        self.metadata = dataset.metadata
        self._goldens = list(dataset.goldens)
        self.keys = unique_keys(self._goldens)
        self._positions = {key: i for i, key in enumerate(self.keys)}
        self._pieces = [self._writer.piece(golden) for golden in self._goldens]
        self._lock = threading.Lock()
        self._seen = self._stat()

    @property
    def goldens(self) -> list[Golden]:
        """The goldens as they are now (a copy of the list; goldens are replaced, never changed)."""
        with self._lock:
            return list(self._goldens)

    def __len__(self) -> int:
        return len(self._goldens)

    def decide(self, key: str, status: str, reason: str | None = None) -> Golden:
        """Record a decision on the golden ``key`` and save; return the golden as saved."""
        return self._change(key, lambda g: decide(g, status, reason=reason, reviewer=self.reviewer))

    def edit(
        self, key: str, *, input: str | None = None, expected_output: str | None = None
    ) -> Golden:
        """Replace the golden's input and/or expected output and save; return it as saved."""
        return self._change(
            key,
            lambda g: edit(g, input=input, expected_output=expected_output, reviewer=self.reviewer),
        )

    def _change(self, key: str, change: Callable[[Golden], Golden]) -> Golden:
        with self._lock:
            position = self._positions.get(key)
            if position is None:
                raise UnknownGoldenError(f"{self.path}: no golden {key!r} in this dataset")
            new = change(self._goldens[position])  # a bad decision raises before anything is saved
            piece = self._writer.piece(new)
            if self._stat() != self._seen:
                raise DatasetChangedError(
                    f"{self.path} was changed by something else since synth review read it; "
                    "nothing was saved: restart synth review to review the file as it is now"
                )
            goldens = [*self._goldens[:position], new, *self._goldens[position + 1 :]]
            pieces = [*self._pieces[:position], piece, *self._pieces[position + 1 :]]
            self._writer.write(goldens, pieces, self.metadata)
            self._goldens, self._pieces, self._seen = goldens, pieces, self._stat()
            return new

    def _stat(self) -> tuple[int, int, int]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (info.st_ino, info.st_size, info.st_mtime_ns)


__all__ = ["DatasetChangedError", "ReviewStore", "UnknownGoldenError", "unique_keys"]
