"""How an ingest reads its files: here, one after another, or elsewhere (on a Ray cluster).

A reader turns the paths into one :class:`FileRead` per file met, in walk order: the file's
status, and for a file read now its document id and chunks (and, read elsewhere, their vectors).
Either way the same ``iter_files`` walk and ``skip`` hook decide which files are read, so the
report, the fingerprints and the chunks are the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from synth.data import Chunk
from synth.ingest import (
    ChunkingConfig,
    FileStatus,
    FileToLoad,
    LoadedFile,
    SkipHook,
    iter_chunks,
    iter_files,
    load_file,
)
from synth.ingest.web import WEB_FOLDER, WebOptions

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
        web: WebOptions | None = None,
    ) -> Iterator[FileRead]: ...


def web_options(web: WebOptions | None, store: ChunkStore) -> WebOptions:
    """``web`` (or the defaults) with its crawl state in the store's folder (``web/`` there; a
    store on a server: ``.synth/web``), unless it names its own."""
    folder = store.path / WEB_FOLDER if store.path is not None else Path(".synth") / WEB_FOLDER
    return (web or WebOptions()).in_folder(folder)


def read_here(
    paths: Sequence[str | os.PathLike[str]],
    store: ChunkStore,
    *,
    password: str | None,
    skip: SkipHook,
    web: WebOptions | None = None,
) -> Iterator[FileRead]:
    """Read and chunk each file in this process, one at a time: a document is chunked as it is
    consumed and let go before the next file is read. URLs are fetched (see ``web_options``)."""
    options = web_options(web, store)
    for item in iter_files(paths, password=password, skip=skip, web=options):
        yield (
            FileRead(item.status)
            if isinstance(item, LoadedFile)
            else read_one(item, store.chunking)
        )


def read_one(item: FileToLoad, chunking: ChunkingConfig) -> FileRead:
    """One file read here, its chunks cut as they are consumed (the document is let go with them)."""
    loaded = load_file(item)
    if loaded.document is None:
        return FileRead(loaded.status)
    return FileRead(loaded.status, loaded.document.id, iter_chunks([loaded.document], chunking))


__all__ = ["FileRead", "Reads", "read_here", "read_one", "web_options"]
