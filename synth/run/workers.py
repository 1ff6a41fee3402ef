"""The helper processes ``synth generate`` starts first thing, on the other core while it imports
the rest: a worker readies the readers and the tokenizer, then reads the run's files
(:mod:`synth.store._worker_reads`), another imports chromadb, then stores a new store's chunks
(:mod:`synth.store._worker_writes`), and lingua's full models load (:mod:`synth._full_models`,
at the lowest priority: their load takes 2.6 s of a core, which the command and its file reader
need first). Each is started once per process and is off without harm. Their modules import
nothing heavy (nor does :mod:`synth.store`), so they start before the command's own imports.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synth.contexts.config import ContextConstructionConfig


def start_workers() -> None:
    """Start the helpers (none waits for its start)."""
    from synth._full_models import FULL_MODELS
    from synth.store._worker_reads import READ_WORKER
    from synth.store._worker_writes import WRITE_WORKER

    READ_WORKER.start()
    WRITE_WORKER.start()
    FULL_MODELS.start()


def stop_workers() -> None:
    """End the file reader and the Chroma writer that :func:`start_workers` started, so none
    outlives the command (a program that calls ``synth.cli.main`` goes on, and a helper left
    running would serve its later library calls); the next :func:`start_workers` starts them
    again. The full models' worker is the library's (every run starts it) and stays."""
    from synth.store._worker_reads import READ_WORKER
    from synth.store._worker_writes import WRITE_WORKER

    for worker in (READ_WORKER, WRITE_WORKER):
        worker.close()
        worker.forget()  # close() alone would keep it from starting for the next command


def read_ahead(
    paths: Sequence[str | os.PathLike[str]],
    contexts: ContextConstructionConfig,
    *,
    ray: str | bool | None,
    store_path: str | os.PathLike[str] | None = None,
) -> None:
    """Into a new store every file is read (none is skipped as stored and unchanged): the read
    worker may start on them now, long before the run's ingest asks for them. ``store_path``:
    the command's store (``.synth/chroma``)."""
    from synth.run.ingest import chunking_of
    from synth.store._worker_reads import READ_WORKER
    from synth.store.chroma import DEFAULT_STORE_PATH

    if not ray and not Path(store_path or DEFAULT_STORE_PATH).exists():
        READ_WORKER.read_ahead(paths, chunking_of(contexts))


__all__ = ["read_ahead", "start_workers", "stop_workers"]
