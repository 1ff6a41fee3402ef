"""A ChunkStore's Chroma collection, opened now or by its first use (``ChromaHandle``).

An embedded store whose folder does not exist yet holds nothing, so a run's store (``open_later``)
opens Chroma, and imports chromadb (half a second alone), only at the first call that needs it,
in whichever thread makes it: a run's first requests leave before it, and its ingest stores the
chunks once they are embedded, in its writer's thread. Its adds go to the write worker when
``synth generate`` started one (:mod:`synth.store._worker_writes`), so the command never opens
Chroma at all; any other use first closes the worker's collection and opens it here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synth.errors import StoreError
from synth.ingest import ChunkingConfig
from synth.store._chroma_client import close_client, connect, open_collection, opening
from synth.store._worker_writes import WRITE_WORKER, WorkerCollection, WorkerGone


class ChromaHandle:
    """A store's client, collection and the client's largest batch, opened once, under the
    store's lock (held by every Chroma call); when opening fails the store's own embedder is
    closed, as the store would have done."""

    def __init__(self, store: Any, *, later: bool) -> None:
        self.path: Path | None = store.path
        self.url: str | None = store.url
        self.name: str = store.collection_name
        self.embedder: str = store.embedder.name
        self.chunking: ChunkingConfig = store.chunking
        self._lock: threading.RLock = store._lock
        self._on_failed_open: Callable[[], None] = store._close_embedder
        self._opened: tuple[Any, Any, int] | None = None
        self._state = threading.Lock()  # guards _opened and closed, never held while opening
        self.closed = False
        self._worker: WorkerCollection | None = None  # the write worker's, while it adds
        self._worker_asked = False
        self.written = False  # something was stored through the worker
        #: nothing stored yet and nothing opened: see the module
        self.new = later and self.path is not None and not self.path.exists()
        if self.new:
            # chromadb imports httpx; the openai SDK, sending requests meanwhile, checks whether
            # httpx is loaded and would find it half imported by the other thread
            import httpx  # noqa: F401
        else:
            self.open()

    @property
    def unopened_new(self) -> bool:
        """A new store not opened yet: it holds nothing."""
        return self.new and self._opened is None and not self.written and not self.closed

    def for_adds(self) -> tuple[Any, int]:
        """What to ``add`` chunks to, and the largest batch: the write worker's collection for a
        new store while the worker can take them (see the module), else the one opened here."""
        with self._lock:
            if self.new and self._opened is None and not self.closed and not self._worker_asked:
                self._worker_asked = True
                assert self.path is not None  # a new store is an embedded one
                self._worker = WRITE_WORKER.collection(  # its folder may not be this one
                    self.path.absolute(), self.name, self.embedder, self.chunking
                )
            if self._worker is not None:
                return self, self._worker.max_batch
        _, collection, max_batch = self.open()
        return collection, max_batch

    def add(self, **records: Any) -> None:
        """Chroma's ``add`` through the write worker; here once it is gone."""
        with self._lock:
            worker = self._worker
            if worker is not None:
                try:
                    worker.add(**records)
                except WorkerGone:
                    self._let_go()  # what it stored stays stored; this add and the rest: here
                else:
                    self.written = True
                    return
        self.open()[1].add(**records)

    def _let_go(self) -> None:
        """Close the write worker's collection (its files written), if it holds one."""
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.close()

    def open(self) -> tuple[Any, Any, int]:
        """The client, collection and largest batch, opening them on the first call (after the
        write worker has closed its collection, if it held one)."""
        with self._lock:
            if self._opened is not None:
                return self._opened
            self._let_go()
            if self.closed:
                raise StoreError(f"the store at {self.path} is closed")
            with opening(self.path):
                client = connect(self.path, self.url)
                try:
                    collection, max_batch = open_collection(
                        client, self.name, self.embedder, self.chunking
                    )
                except StoreError:
                    self.closed = True
                    close_client(client)
                    self._on_failed_open()
                    raise
            with self._state:
                if not self.closed:
                    self._opened = (client, collection, max_batch)
                    return self._opened
            close_client(client)  # closed while it opened: nothing is written any more
            raise StoreError(f"the store at {self.path} was closed while it opened")

    def set_max_batch(self, value: int) -> None:
        client, collection, _ = self.open()
        with self._state:
            self._opened = (client, collection, value)

    def close(self) -> None:
        """Close the client, when it was opened; later calls find the store closed. It does not
        wait for an open under way (a run's Ctrl-C must not wait for chromadb's import): that
        open closes its own client."""
        with self._state:
            opened, self._opened, self.closed = self._opened, None, True
        self._let_go()  # waits for the worker's writes to be on disk
        if opened is not None:
            close_client(opened[0])


__all__ = ["ChromaHandle"]
