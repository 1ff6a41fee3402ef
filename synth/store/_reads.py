"""How an ingest reads its files: here, one after another, or elsewhere (on a Ray cluster).

A reader turns the paths into one :class:`FileRead` per file met, in walk order: the file's
status, and for a file read now its document id and chunks (and, read elsewhere, their vectors).
Either way the same ``iter_files`` walk and ``skip`` hook decide which files are read, so the
report, the fingerprints and the chunks are the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from synth.data import Chunk
from synth.ingest import FileStatus, SkipHook, iter_chunks, iter_load

if TYPE_CHECKING:
    from synth.store.chroma import ChunkStore


class FileRead(NamedTuple):
    """One file met: its status, and when it was read now, its document id and its chunks."""

    status: FileStatus
    document_id: str | None = None
    chunks: Iterable[Chunk] = ()


class Reads(Protocol):
    """What :func:`~synth.store.ingest_run.start_ingest` reads its files with."""

    def __call__(
        self,
        paths: Sequence[str | os.PathLike[str]],
        store: ChunkStore,
        *,
        password: str | None,
        skip: SkipHook,
    ) -> Iterator[FileRead]: ...


def read_here(
    paths: Sequence[str | os.PathLike[str]],
    store: ChunkStore,
    *,
    password: str | None,
    skip: SkipHook,
) -> Iterator[FileRead]:
    """Read and chunk each file in this process, one at a time: a document is chunked as it is
    consumed and let go before the next file is read."""
    for loaded in iter_load(paths, password=password, skip=skip):
        status, document = loaded.status, loaded.document
        del loaded
        if document is None:
            yield FileRead(status)
            continue
        yield FileRead(status, document.id, iter_chunks([document], store.chunking))
        del document


__all__ = ["FileRead", "Reads", "read_here"]
