"""Reads a run's files in the worker process :mod:`synth.ingest._worker` (a :class:`Reads`).

``synth generate`` starts :data:`READ_WORKER` as it begins, so the worker imports the readers and
loads the tokenizer on another core while the command imports the rest; a run's ingest then walks
the files here (the same walk and ``skip`` hook as :func:`~synth.store._reads.read_here`, so the
report and the fingerprints are the same) and the worker reads and chunks them, up to
:data:`WINDOW` files ahead of the one being stored.

Nothing is lost when the worker cannot help: a file whose loader does not pickle (one registered
in this process only), or any file after the worker failed or ended, is read here instead, and a
file that failed to read there fails as it would here. ``SYNTH_READ_WORKER=0`` turns it off.
"""

from __future__ import annotations

import atexit
import os
import pickle
from collections import deque
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from synth._worker_process import WorkerProcess

if TYPE_CHECKING:  # imported where used: `synth generate` starts the worker before it has them
    from synth.ingest import ChunkingConfig, FileToLoad, SkipHook
    from synth.store._reads import FileRead
    from synth.store.chroma import ChunkStore

#: the environment variable that turns the worker off ("0")
ENV = "SYNTH_READ_WORKER"
#: files sent to the worker ahead of the one being stored (small requests: the pipe never fills)
WINDOW = 8


class ReadWorker(WorkerProcess):
    """The client of one worker process (see the module): :meth:`start` it early, then read a
    run's files with :meth:`reads` while it is :attr:`available`."""

    def __init__(self, command: list[str] | None = None) -> None:
        super().__init__("synth.ingest._worker", ENV, command)
        #: files the worker read (of which read ahead), and files read here instead
        self.counts = {"worker": 0, "here": 0, "ahead": 0}

    def read_ahead(self, paths: Sequence[str | os.PathLike[str]], chunking: ChunkingConfig) -> None:
        """Have the worker read the first files under ``paths`` now, before they are asked for
        (see :mod:`synth.ingest._worker`): for a run whose files are all read (a new store), as
        soon as it knows its chunking. Does not wait; nothing when no worker runs."""
        with self._lock:
            if not self.available or self._connection is None:
                return
            try:
                self._connection.send(
                    ("ahead", os.getcwd(), [os.fspath(p) for p in paths], chunking)
                )
            except OSError:
                self._stop()

    def reads(
        self,
        paths: Sequence[str | os.PathLike[str]],
        store: ChunkStore,
        *,
        password: str | None,
        skip: SkipHook,
    ) -> Iterator[FileRead]:
        """One :class:`FileRead` per file met, in walk order, read by the worker (see the module)."""
        from synth.ingest import LoadedFile, iter_files

        chunking = store.chunking
        waiting: deque[tuple[str, Any]] = deque()  # ("known", LoadedFile) / ("sent" | "here", item)
        sent = 0
        with self._lock:
            try:
                for item in iter_files(paths, password=password, skip=skip):
                    if isinstance(item, LoadedFile):
                        waiting.append(("known", item))
                        continue
                    kind = "sent" if self._send(item, chunking) else "here"
                    sent += kind == "sent"
                    waiting.append((kind, item))
                    while sent > WINDOW:
                        kind, head = waiting.popleft()
                        sent -= kind == "sent"
                        yield self._take(kind, head, chunking)
                while waiting:
                    kind, head = waiting.popleft()
                    yield self._take(kind, head, chunking)
            finally:
                if any(kind == "sent" for kind, _ in waiting):
                    # given up part way (a failed ingest): the answers still owed would reach
                    # the next reader, so this worker is stopped and the next reads here
                    self._stop()

    def _send(self, item: FileToLoad, chunking: ChunkingConfig) -> bool:
        if not self.available or self._connection is None:
            return False
        # the worker may have been started in another folder (a program that changed its own)
        item = item._replace(file=item.file.absolute())
        try:
            payload = pickle.dumps((item, chunking))
        except (pickle.PicklingError, AttributeError, TypeError):
            return False  # a loader registered in this process only: read here
        try:
            self._connection.send_bytes(payload)
        except OSError:
            self._stop()
            return False
        return True

    def _take(self, kind: str, item: Any, chunking: ChunkingConfig) -> FileRead:
        from synth.store._reads import FileRead, read_one

        if kind == "known":
            return FileRead(item.status)
        if kind == "sent" and self.available and self._connection is not None:
            try:
                reply = self._connection.recv()
            except (EOFError, OSError, pickle.UnpicklingError):
                self._stop()  # dead or garbled: this file and every later one are read here
            else:
                if reply[0] == "error":
                    raise reply[1]
                kind, status, document_id, chunks = reply
                self.counts["worker"] += 1
                self.counts["ahead"] += kind == "ahead"
                return FileRead(status, document_id, chunks)
        self.counts["here"] += 1
        return read_one(item, chunking)


#: the process's worker, started by ``synth generate``
READ_WORKER = ReadWorker()
atexit.register(READ_WORKER.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=READ_WORKER.forget)


__all__ = ["ENV", "READ_WORKER", "WINDOW", "ReadWorker"]
