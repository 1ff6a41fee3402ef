"""A run's files read and chunked in a process of its own, started with ``synth generate``.

Reading is CPU work that holds the interpreter: the readers' imports (pypdf, python-docx,
langchain-text-splitters), the tokenizer's ranks, language detection and chunking took about a
second of a run's start, in the process that also imports the model SDK and sends the requests.
:class:`~synth.store._worker_reads.ReadWorker` starts this worker as the command starts, so those
imports run on another core while the command imports the rest, and the files are read there.

Run as ``python -m synth.ingest._worker FD``: FD is this end of a socket pair, spoken over with
:class:`multiprocessing.connection.Connection` (pickles). Each request is ``(FileToLoad,
ChunkingConfig)``; each answer ``("ok", FileStatus, document_id, chunks)`` (``"ahead"`` instead of
``"ok"`` when it was read ahead) or ``("error", exception)``. The worker ends when its parent
closes the connection.

``("ahead", cwd, paths, chunking)``, answered by nothing, asks it to read the first
:data:`AHEAD_FILES` files of that walk before they are asked for (a run into a new store, whose
files are all read, sends it as soon as it knows its chunking, long before its ingest starts). It
stops reading ahead as soon as a request comes; a file read ahead is answered from what was read
only when its request names the same file, display path, loader and chunking and the file's size
and modification time have not changed (else it is read again), and what its reading logged is
said when it is answered.
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


#: files read ahead at most (what they hold waits in the worker until it is asked for)
AHEAD_FILES = 64


def _stamp(file: Any) -> tuple[int, int] | None:
    try:
        stat = os.stat(file)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


class _Ahead:
    """Files read before they are asked for, by (absolute file, display path, suffix)."""

    def __init__(self) -> None:
        self.read: dict[tuple[str, str, str], tuple[Any, ...]] = {}

    def fill(self, message: tuple[Any, ...], connection: Any) -> None:
        """Read the walk's first files until a request comes (see the module)."""
        from synth.ingest import FileToLoad, iter_files, read_chunked

        _, cwd, paths, chunking = message
        os.chdir(cwd)  # the walk's display paths are the parent's
        for item in iter_files(paths):
            if len(self.read) >= AHEAD_FILES or connection.poll():
                return
            if not isinstance(item, FileToLoad):
                continue
            item = item._replace(file=item.file.absolute())
            stamp = _stamp(item.file)
            handler, root = _Held(), logging.getLogger()
            said, root.handlers = root.handlers, [handler]  # kept until the file is asked for
            try:
                answer = read_chunked(item, chunking)
            except Exception:  # noqa: BLE001 - read again when asked: it fails there as here
                continue
            finally:
                root.handlers = said
            key = (str(item.file), item.path, item.suffix)
            self.read[key] = (item.loader, chunking, stamp, handler.records, answer)

    def take(self, item: Any, chunking: Any) -> tuple[Any, ...] | None:
        """The answer read ahead for this request, its log said now; None: read it now."""
        found = self.read.pop((str(item.file), item.path, item.suffix), None)
        if found is None:
            return None
        loader, made_with, stamp, records, answer = found
        if loader != item.loader or made_with != chunking or stamp != _stamp(item.file):
            return None
        for record in records:
            logging.getLogger(record.name).handle(record)
        return ("ahead", *answer)


def _answer(message: Any, ahead: _Ahead) -> tuple[Any, ...]:
    from synth.ingest import read_chunked

    return ahead.take(*message) or ("ok", *read_chunked(*message))


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
    ahead = _Ahead()
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message[0] == "ahead":
            try:
                ahead.fill(message, connection)
            except Exception:  # noqa: BLE001 - read ahead or not, each file is read when asked
                pass
            continue
        for record in held:  # said now that a file is read
            logging.getLogger(record.name).handle(record)
        held = []
        try:
            reply = _answer(message, ahead)
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
