"""The review server's one state: the dataset's goldens, changed one at a time under a lock, each
change on disk before it is answered.

A change is appended to the dataset's review journal and flushed (see
:mod:`synth.dataset._journal`; :meth:`Dataset.load` applies it, so the decision is in the dataset
at once); a background thread then folds the journal into the dataset file, atomically, once
decisions pause for :data:`QUIET` seconds (at most :data:`LATEST` after the first), and
:meth:`ReviewStore.close` folds in the rest. Writing the whole file per decision would cost 50 to
250 ms on 5,000 goldens; the journal line costs a few.

Every browser tab talks to the same store and every request changes one golden, so two tabs never
overwrite each other's work: the last decision on a golden wins and every other golden keeps its
own. A change is in memory only once it is on disk; if the write fails, the golden is as it was.
If the dataset file is changed behind the server's back (another ``synth review``, an editor,
``synth refill``), the next change is refused rather than overwriting it.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synth.data import Golden
from synth.dataset import Dataset, _journal
from synth.dataset.review import Status, counts, decide, edit, review_keys, status_of
from synth.errors import DatasetError
from synth.review._files import writer_for

#: seconds without a decision after which the journal is folded into the dataset file
QUIET = 0.5
#: the longest a decision waits in the journal alone while decisions keep coming
LATEST = 5.0


class UnknownGoldenError(DatasetError, LookupError):
    """A request named a golden the dataset does not hold."""


class DatasetChangedError(DatasetError):
    """The dataset file changed on disk since the review server read or last wrote it."""


class ReviewStore:
    """A dataset file under review: every decision journaled at once, folded into the file soon.

    Use as a context manager (or call :meth:`close`) so the last decisions reach the file itself;
    if the process dies first, they are in the journal, which every load applies.
    """

    def __init__(self, path: str | os.PathLike[str], *, reviewer: str) -> None:
        self.path = Path(path)
        self.reviewer = reviewer
        self._writer = writer_for(self.path)
        dataset = Dataset.load(self.path)  # the journal of a killed review applied
        self.metadata = dataset.metadata
        self._goldens = list(dataset.goldens)
        self.keys = review_keys(self._goldens)
        self._positions = {key: i for i, key in enumerate(self.keys)}
        self._pieces = [self._writer.piece(golden) for golden in self._goldens]
        self._counts = counts(self._goldens)
        self._lock = threading.Lock()
        self._journaled: list[dict[str, Any]] = []  # decisions not yet in the dataset file
        self._folding = False
        self._seen = self._stat()
        if _journal.journal_path(self.path).exists():
            self._fold(reread=True)  # what a killed server left in the journal, into the file
        self._wake = threading.Condition()
        self._last_change = 0.0
        self._stalled = (
            -1.0
        )  # the change after which a fold last failed: not retried until the next
        self._closed = False
        self._folder = threading.Thread(target=self._fold_when_quiet, daemon=True)
        self._folder.start()

    @property
    def goldens(self) -> list[Golden]:
        """The goldens as they are now (a copy of the list; goldens are replaced, never changed)."""
        with self._lock:
            return list(self._goldens)

    def __len__(self) -> int:
        return len(self._goldens)

    @property
    def counts(self) -> dict[Status, int]:
        """How many goldens have each status now (kept up to date, not recounted)."""
        with self._lock:
            return dict(self._counts)

    def decide(self, key: str, status: str, reason: str | None = None) -> Golden:
        """Record a decision on the golden ``key`` and save it; return the golden as saved."""
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
            if not self._folding:  # the folder's own write changes the file's stat meanwhile
                self._check_unchanged()
            line = _journal.entry(key, new)
            _journal.append(self.path, line)
            self._counts[status_of(self._goldens[position])] -= 1
            self._counts[status_of(new)] += 1
            self._goldens[position], self._pieces[position] = new, piece
            self._journaled.append(line)
        with self._wake:
            self._last_change = time.monotonic()
            self._wake.notify()
        return new

    # ---- folding the journal into the file ------------------------------------------------------
    def flush(self) -> None:
        """Fold every journaled decision into the dataset file now."""
        self._fold()

    def close(self) -> None:
        """Fold in the last decisions and stop the background thread."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._folder.join()
        self._fold()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fold_when_quiet(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (
                    not self._journaled or self._last_change == self._stalled
                ):
                    self._wake.wait()
                if self._closed:
                    return
                first = time.monotonic()
                while not self._closed:
                    quiet = self._last_change + QUIET - time.monotonic()
                    latest = first + LATEST - time.monotonic()
                    if min(quiet, latest) <= 0:
                        break
                    self._wake.wait(min(quiet, latest))
            try:
                self._fold()
            except (DatasetError, OSError):
                # the decisions stay in the journal (read by every load); the fold is tried again
                # after the next decision or at close, not in a loop that would spin on the error
                with self._wake:
                    self._stalled = self._last_change

    def _fold(self, *, reread: bool = False) -> None:
        with self._lock:
            if not (self._journaled or reread) or self._folding:
                return
            self._check_unchanged()
            goldens, pieces, folded = list(self._goldens), list(self._pieces), len(self._journaled)
            self._folding = True
        try:
            self._writer.write(goldens, pieces, self.metadata)  # outside the lock: decisions go on
        except BaseException:
            with self._lock:
                self._folding = False
            raise
        with self._lock:  # one step, so no decision sees the file's new stat before _seen does
            self._journaled = self._journaled[folded:]
            _journal.rewrite(self.path, self._journaled)
            self._seen = self._stat()
            self._folding = False

    def _check_unchanged(self) -> None:
        if self._stat() != self._seen:
            raise DatasetChangedError(
                f"{self.path} was changed by something else since synth review read it; "
                "nothing was saved: restart synth review to review the file as it is now"
            )

    def _stat(self) -> tuple[int, int, int]:
        try:
            info = self.path.stat()
        except FileNotFoundError:
            return (0, 0, 0)
        return (info.st_ino, info.st_size, info.st_mtime_ns)


__all__ = ["LATEST", "QUIET", "DatasetChangedError", "ReviewStore", "UnknownGoldenError"]
