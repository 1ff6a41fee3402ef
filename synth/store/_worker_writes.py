"""A new store's adds made by the worker process :mod:`synth.store._write_worker` (``WRITE_WORKER``).

``synth generate`` starts :data:`WRITE_WORKER` as it begins; a run's store whose folder does not
exist yet (``ChunkStore(open_later=True)``, :mod:`synth.store._handle`) then asks it for a
:class:`WorkerCollection` and stores its chunks through it, so this process never imports
chromadb. Each add waits for the worker's answer, in the ingest's writer thread: a failed write
fails the ingest as it would here.

Nothing is lost when the worker cannot help: when it is gone (dead, or its answer garbled) the
add that found it so raises :class:`WorkerGone` and the store opens Chroma here and writes that
add and the rest itself (the adds the worker answered are stored). Any other use of the store
(a count, a query) first closes the worker's collection, then opens Chroma here.
``SYNTH_WRITE_WORKER=0`` turns the worker off.
"""

from __future__ import annotations

import atexit
import os
import pickle
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth._worker_process import WorkerProcess

if TYPE_CHECKING:  # `synth generate` starts the worker before it imports the ingest
    from synth.ingest import ChunkingConfig

#: the environment variable that turns the worker off ("0")
ENV = "SYNTH_WRITE_WORKER"


class WorkerGone(Exception):
    """The worker cannot answer (dead, or garbled): write here instead."""


class WriteWorker(WorkerProcess):
    """The client of the write worker (see the module): one collection open there at a time."""

    def __init__(self, command: list[str] | None = None) -> None:
        super().__init__("synth.store._write_worker", ENV, command)
        self._busy = False  # a WorkerCollection holds the worker
        #: adds the worker stored (for tests and the bench)
        self.adds = 0

    def collection(
        self, path: Path, name: str, embedder: str, chunking: ChunkingConfig
    ) -> WorkerCollection | None:
        """The collection ``name`` at ``path``, opened (made) by the worker, and the client's
        largest batch; None when the worker is not running or already holds a collection."""
        with self._lock:
            if not self.available or self._busy:
                return None
            self._busy = True
        try:
            max_batch = self._ask(("open", path, name, embedder, chunking))
        except WorkerGone:
            self._busy = False
            return None
        except BaseException:
            self._busy = False
            raise
        return WorkerCollection(self, int(max_batch))

    def _ask(self, request: tuple[Any, ...]) -> Any:
        """The worker's answer to ``request``; its error raised here; WorkerGone when it is gone."""
        with self._lock:
            connection = self._connection
            if connection is None or self._failed:
                raise WorkerGone
            try:
                connection.send(request)
                reply = connection.recv()
            except (EOFError, OSError, pickle.PicklingError, pickle.UnpicklingError):
                self._stop()
                raise WorkerGone from None
        if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] in ("ok", "error")):
            with self._lock:
                self._stop()
            raise WorkerGone
        if reply[0] == "error":
            raise reply[1]
        return reply[1]

    def _release(self) -> None:
        self._busy = False

    def forget(self) -> None:
        super().forget()
        self._busy = False


class WorkerCollection:
    """A Chroma collection held by the write worker: :meth:`add` as Chroma's, :meth:`close`."""

    def __init__(self, worker: WriteWorker, max_batch: int) -> None:
        self.worker = worker
        self.max_batch = max_batch
        self.closed = False

    def add(self, **records: Any) -> None:
        """Store ``records`` (Chroma's ``add`` arguments) there; WorkerGone when it cannot."""
        self.worker._ask(("add", records))
        self.worker.adds += 1

    def close(self) -> None:
        """Close the collection there (its files written); the worker is free for another."""
        if self.closed:
            return
        self.closed = True
        try:
            self.worker._ask(("close",))
        except WorkerGone:
            pass  # gone: it closed its client as it ended
        finally:
            self.worker._release()


#: the process's write worker, started by ``synth generate``
WRITE_WORKER = WriteWorker()
atexit.register(WRITE_WORKER.close)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=WRITE_WORKER.forget)


__all__ = ["ENV", "WRITE_WORKER", "WorkerCollection", "WorkerGone", "WriteWorker"]
