"""A run's files read and chunked in a process of its own, started with ``synth generate``.

Reading is CPU work that holds the interpreter: the readers' imports (pypdf, python-docx,
langchain-text-splitters), the tokenizer's ranks, language detection and chunking took about a
second of a run's start, in the process that also imports the model SDK and sends the requests.
:class:`~synth.store._worker_reads.ReadWorker` starts this worker as the command starts, so those
imports run on another core while the command imports the rest, and the files are read there.

Run as ``python -m synth.ingest._worker FD``: FD is this end of a socket pair, spoken over with
:class:`multiprocessing.connection.Connection` (pickles). Each request is ``(FileToLoad,
ChunkingConfig)``; each answer ``("ok", FileStatus, document_id, chunks)`` or ``("error",
exception)``. The worker ends when its parent closes the connection.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any


class _Held(logging.Handler):
    """Keeps the records it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _warm() -> list[logging.LogRecord]:
    """What the first file will need, loaded before it comes; what it logged meanwhile (the
    tokenizer's offline-copy notice), kept for the first file: a run refused before reading any
    says nothing of a tokenizer it never used."""
    handler = _Held()
    held = handler.records
    root = logging.getLogger("synth")
    root.addHandler(handler)
    propagate, root.propagate = root.propagate, False
    try:
        from synth._tokens import get_encoding
        from synth.ingest import _splitter, docx, pdf  # noqa: F401 - imported for the first file
        from synth.ingest.chunking import ChunkingConfig

        get_encoding(ChunkingConfig().encoding)
    finally:
        root.removeHandler(handler)
        root.propagate = propagate
    return held


def _answer(message: Any) -> tuple[Any, ...]:
    from synth.ingest import read_chunked

    return ("ok", *read_chunked(*message))


def serve(fd: int) -> None:  # pragma: no cover - runs in the worker process (its tests drive it)
    import signal
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C is the parent's to handle
    connection = Connection(fd)
    held: list[logging.LogRecord] = []
    try:
        held = _warm()
    except Exception:  # noqa: BLE001 - the first file reports what is missing
        pass
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        for record in held:  # said now that a file is read
            logging.getLogger(record.name).handle(record)
        held = []
        try:
            reply = _answer(message)
        except Exception as exc:  # noqa: BLE001 - raised in the parent, as reading there would
            reply = ("error", exc)
        try:
            connection.send(reply)
        except (BrokenPipeError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - an answer that does not pickle
            connection.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))


if __name__ == "__main__":  # pragma: no cover
    serve(int(sys.argv[1]))
    os._exit(0)  # nothing to flush: the answers went through the connection
