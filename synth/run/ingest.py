"""Stage 1 for a run: ingest the documents and find the chunks that belong to this run."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ConfigError
from synth.run.manifest import stage_row

if TYPE_CHECKING:
    from synth.ingest import ChunkingConfig
    from synth.ingest.web import WebOptions
    from synth.run.session import RunSession
    from synth.store import ChunkStore
    from synth.store._reads import Reads
    from synth.store.embedder import Embedder
    from synth.store.ingest_run import IngestReport, PendingIngest


def ingest_for_run(
    paths: list[str],
    config: ContextConstructionConfig,
    embedder: Embedder,
    *,
    store_path: str | os.PathLike[str],
    store_url: str | None = None,
    ray: str | bool | None = None,
    web: WebOptions | None = None,
    reads: Reads | None = None,
) -> tuple[ChunkStore, PendingIngest, list[Chunk]]:
    """Load, chunk (``config``'s chunk size, overlap and encoding), embed and store the files
    under ``paths``; return the open store, the ingest under way (a
    :class:`~synth.store.ingest_run.PendingIngest`) and the chunks of the files read.

    It returns once every file is chunked: the chunks may still be being embedded and stored,
    whatever the embedder (a remote one's requests hold slots of the run's limiter, beside the
    critic's). Call ``finish()`` on the ingest before reading the store (and before closing it).
    When no file could be read, one ConfigError line says why for each file (the first few).
    ``ray`` (an address, or True for a Ray started for the run) reads, chunks and embeds the
    files as Ray tasks (:mod:`synth.store.ray_ingest`); this process stores them. ``web`` says
    how URLs among ``paths`` are fetched (:mod:`synth.ingest.web`). ``reads`` reads something
    else than the files under ``paths`` (the user's documents: :mod:`synth.pipeline.given`)."""
    from synth.store import ChunkStore
    from synth.store._reads import read_here
    from synth.store.ingest_run import start_ingest

    chunking = chunking_of(config)
    store_embedder = embedder
    if reads is None:
        reads = read_here  # read and chunked in this process, file by file
    if ray and reads is read_here:
        from synth.store.ray_ingest import RayReads

        reads = RayReads(ray, embedder)
        store_embedder = reads.embedder
    store = ChunkStore(store_embedder, path=store_path, url=store_url, chunking=chunking)
    pending = None
    try:
        # every chunk is kept for the run anyway, so the writes may wait until all files are
        # read and then run while the first critic requests are out; a remote embedder's start
        # as the files are read (its requests wait on the network, not on this process) and go
        # on while the critic's are out, both within the run's limiter
        # into a new store, a remote embedder's writes are held as well: its vectors are then
        # handed to the run as soon as they come back, before Chroma stores them
        hold = not embedder.remote or store.new
        pending = start_ingest(
            paths, store, keep_chunks=True, hold_writes=hold, reads=reads, web=web
        )
        if not pending.report.any_read:
            raise ConfigError(nothing_read(paths, pending.report.files))
        chunks = chunks_of_run(pending, store)
    except BaseException:
        if pending is not None:
            pending.close()
        store.close()
        raise
    return store, pending, chunks


def chunking_of(config: ContextConstructionConfig) -> ChunkingConfig:
    """How a run cuts its files: the contexts config's chunk size, overlap and encoding."""
    from synth.ingest import make_chunking_config

    sizes: dict[str, Any] = {"chunk_size": config.chunk_size, "chunk_overlap": config.chunk_overlap}
    if config.encoding is not None:
        sizes["encoding"] = config.encoding
    return make_chunking_config(**sizes)


#: the "no document could be read" line names this many files before "and N more"
SHOWN_FILES = 4


def nothing_read(paths: list[str], files: list[Any]) -> str:
    """The one line saying no document could be read from ``paths``, with each file's reason."""
    where = f"no document could be read from {', '.join(paths)}"
    if not files:
        return f"{where}: no files found there"
    shown = [f"{f.path}: {f.reason or f.status}" for f in files[:SHOWN_FILES]]
    more = len(files) - len(shown)
    if more:
        shown.append(f"and {more} more")
    return f"{where}: {'; '.join(shown)}"


#: source files per store read in :func:`chunks_of_run`, at most
SOURCES_PER_READ = 256


def read_groups(rows: list[Any], page: int) -> list[list[str]]:
    """The stored files' paths in reads of at most SOURCES_PER_READ files and, by the chunks the
    report counts for them, fewer than ``page`` chunks (a larger file is read alone), in order:
    a read of a full page would ask for a second one, which matches every row once more.

    Chroma answers each page of a read filtered by file by matching every row of the filter
    again: 256 files of 100 chunks a read cost 26 pages of 25,600 rows each, a read's cost per
    chunk grew with the files it asked for. A read that fits one page matches each row once."""
    groups: list[list[str]] = []
    size = 0
    for row in rows:
        chunks = max(int(row.chunks or 0), 0)
        if not groups or len(groups[-1]) >= SOURCES_PER_READ or size + chunks >= page:
            groups.append([])
            size = 0
        groups[-1].append(row.path)
        size += chunks
    return groups


#: chunk ids per read in :func:`read_by_ids`
IDS_PER_READ = 2048


def read_by_ids(rows: list[Any], store: Any, by_source: dict[str, list[Chunk]]) -> list[Any]:
    """Read the chunks of the stored files whose ids are known into ``by_source``: a chunk's id
    is its document's id, the chunking's key and its place (:func:`synth._ids.chunk_id`), and the
    report counts each file's chunks. Returns the rows left to read by file (count unknown, or a
    chunk missing).

    A read by id is a lookup in Chroma's index of ids, its cost the ids asked; a read filtered by
    file cost as much as the whole collection at every page (5 ms at 20,000 chunks, 50 to 100
    at 200,000): reading a store's files that way took time growing as its square."""
    from synth._ids import chunk_id

    known = [row for row in rows if row.document_id and row.chunks]
    left = [row for row in rows if not (row.document_id and row.chunks)]
    key = store.chunking.key() if known else ""
    start = 0
    while start < len(known):
        group: list[Any] = []
        size = 0
        while start < len(known) and (not group or size + known[start].chunks <= IDS_PER_READ):
            group.append(known[start])
            size += known[start].chunks
            start += 1
        ids = [chunk_id(r.document_id, key, i) for r in group for i in range(r.chunks)]
        found: dict[str, list[Chunk]] = {}
        for chunk in store.get(ids, missing_ok=True):
            found.setdefault(chunk.source, []).append(chunk)
        for row in group:
            if len(found.get(row.path, ())) == row.chunks:
                by_source[row.path].extend(found[row.path])
            else:  # a chunk is missing (or stored under another path): read by file
                left.append(row)
    return left


def chunks_of_run(pending: Any, store: Any) -> list[Chunk]:
    """The chunks of the files this run read (not other folders sharing the store), file by file
    in the report's order: those read now as the ingest cut them, those unchanged since an earlier
    ingest from the store (their stored version only)."""
    from synth.store.chroma import READ_PAGE

    rows = [row for row in pending.report.files if row.status == "ok"]
    stored_rows = [row for row in rows if row.path not in pending.chunks]
    by_source: dict[str, list[Chunk]] = {row.path: [] for row in stored_rows}
    unknown = read_by_ids(stored_rows, store, by_source)
    for group in read_groups(unknown, READ_PAGE):
        for chunk in store.chunks(source=group):
            by_source[chunk.source].append(chunk)
    chunks: list[Chunk] = []
    for row in rows:
        if row.path in pending.chunks:
            chunks.extend(pending.chunks[row.path])
        else:  # a version left by an interrupted ingest is not this file's
            chunks.extend(c for c in by_source[row.path] if c.document_id == row.document_id)
    return chunks


def files_read(report: IngestReport) -> int:
    """How many of the files the ingest met it could read."""
    return sum(1 for f in report.files if f.status == "ok")


def record_ingest(
    run: RunSession,
    report: IngestReport,
    paths: list[str],
    chunks: list[Chunk],
) -> None:
    """Put stage 1 in the run's manifest: the ingest's notice, its row and what the run read."""
    if report.notice:
        run.note(report.notice)
    run.rows.append(ingest_row(report))
    run.info["inputs"] = {
        "paths": paths,
        "files": len(report.files),
        "chunks": len(chunks),
        "store": report.collection,
    }


@contextmanager
def ingest_in_run(
    run: RunSession,
    paths: list[str],
    embedder: Embedder,
    ingest: Callable[[], tuple[ChunkStore, PendingIngest, list[Chunk]]],
) -> Iterator[tuple[PendingIngest, list[Chunk]]]:
    """Stage 1 inside a run: ``ingest()`` starts it and the ingest under way and the run's chunks
    are handed over (the last chunks may still be being stored while the first critic requests
    are out); when the block ends, the ingest is finished and recorded (files, chunks, embedding
    requests). On an error the writes still waiting are dropped; the store is closed either way."""
    sent_before = embedder.batches_embedded
    store, pending, chunks = ingest()  # every file is read when it returns
    try:
        record_ingest(run, pending.report, paths, chunks)
        yield pending, chunks
        report = pending.finish()
        run.count_embeddings("ingest", embedder, sent_before, pending.embedder_batches)
        run.note(ingested_note(report, chunks))
    finally:  # on an error, the write under way ends (and the store closes) in its thread
        pending.close(then=store.close)


def ingested_note(report: IngestReport, chunks: list[Chunk]) -> str:
    """The line a run notes once its ingest is done: files read, chunks embedded and reused."""
    return (
        f"ingested {files_read(report)} of {len(report.files)} files: "
        f"{len(chunks)} chunks ({report.embedded} embedded now, {report.reused} already stored)"
    )


def ingest_row(report: Any) -> dict[str, Any]:
    """The manifest row of stage 1: files met, files read, the others by status and reason."""
    dropped: Counter[str] = Counter()
    for f in report.files:
        if f.status != "ok":
            dropped[f"{f.status}: {f.reason}" if f.reason else f.status] += 1
    return stage_row("ingest", len(report.files), files_read(report), dropped)


def read_chunks(config: ContextConstructionConfig, paths: list[str]) -> list[Chunk]:
    """The corpus's chunks now, read and cut as the ingest cuts them, nothing embedded; a
    ConfigError when no document could be read (as the ingest says it): an empty folder is a
    wrong path, not a corpus whose every file was deleted."""
    from synth.ingest import chunk_documents, load_documents

    report = load_documents(paths)
    if not report.documents:
        raise ConfigError(nothing_read(paths, report.files))
    return chunk_documents(report.documents, chunking_of(config))


__all__ = [
    "read_chunks",
    "SHOWN_FILES",
    "chunking_of",
    "chunks_of_run",
    "read_by_ids",
    "read_groups",
    "files_read",
    "ingest_for_run",
    "ingest_in_run",
    "ingest_row",
    "ingested_note",
    "nothing_read",
    "record_ingest",
]
