"""A new store's chunks written into Chroma in a process of its own, started with ``synth generate``.

Importing chromadb takes about half a second of the interpreter, and a run into a new store needs
Chroma for nothing but storing its chunks (the run reads the vectors as they come back from the
embedder). :class:`~synth.store._worker_writes.WriteWorker` starts this worker as the command
starts, at a lower priority than the run's own processes: it imports chromadb on the other core
while the command imports the rest and reads the files, and the run's ingest hands it the adds
(:mod:`synth.store._handle`). The command itself never imports chromadb.

Run as ``python -m synth.store._write_worker FD``: FD is this end of a socket pair, spoken over with
:class:`multiprocessing.connection.Connection` (pickles). Requests, each answered ``("ok", value)``
or ``("error", exception)``: ``("open", path, name, embedder, chunking)`` opens (makes) the
collection as the command would and answers the client's largest batch; ``("add", records)``
stores them (the keyword arguments of Chroma's ``add``); ``("close",)`` closes the client. The
worker ends when its parent closes the connection, closing the client first.
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: the worker's niceness: its import and writes are needed by the run's end, not its start
NICE = 10


class _Store:
    """The one collection this worker writes into (opened by ``open``, closed by ``close``)."""

    def __init__(self) -> None:
        self.client: Any = None
        self.collection: Any = None
        self.path: Any = None  # the folder of the store open (a full disk is said with it)

    def answer(self, message: tuple[Any, ...]) -> Any:
        from synth.store._chroma_client import (
            chroma_errors,
            close_client,
            connect,
            open_collection,
            opening,
        )

        kind = message[0]
        if kind == "open":
            _, path, name, embedder, chunking = message
            self.close(close_client)
            self.path = path
            with opening(path):
                self.client = connect(path, None)
                self.collection, max_batch = open_collection(self.client, name, embedder, chunking)
            return max_batch
        if kind == "add":
            if self.collection is None:
                raise RuntimeError("no collection is open in the write worker")
            with chroma_errors("add chunks", self.path):
                self.collection.add(**message[1])
            return None
        if kind == "close":
            self.close(close_client)
            return None
        raise RuntimeError(f"unknown request to the write worker: {kind!r}")

    def close(self, close_client: Any) -> None:
        client, self.client, self.collection = self.client, None, None
        if client is not None:
            close_client(client)


def serve(fd: int) -> None:  # pragma: no cover - runs in the worker process (its tests drive it)
    import signal
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C is the parent's to handle
    if hasattr(os, "nice"):
        os.nice(NICE)
    connection = Connection(fd)
    try:
        import chromadb  # noqa: F401 - the first request needs it

        from synth.store import _chroma_client  # noqa: F401
    except Exception:  # noqa: BLE001 - the first request reports what is missing
        pass
    store = _Store()
    try:
        while True:
            try:
                message = connection.recv()
            except (EOFError, OSError):
                return
            try:
                reply: tuple[Any, ...] = ("ok", store.answer(message))
            except Exception as exc:  # noqa: BLE001 - raised in the parent, as writing there would
                reply = ("error", exc)
            try:
                connection.send(reply)
            except (BrokenPipeError, OSError):
                return
            except Exception as exc:  # noqa: BLE001 - an error that does not pickle
                connection.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        from synth.store._chroma_client import close_client

        store.close(close_client)


if __name__ == "__main__":  # pragma: no cover
    serve(int(sys.argv[1]))
    os._exit(0)  # the client is closed: Chroma's files are written
