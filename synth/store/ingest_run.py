"""``ingest_documents(paths)``: load, chunk, embed and store documents, one file at a time.

Files stream through: each loaded document is chunked at once and its chunks wait in a small buffer
that is embedded and stored when full, in a background thread while the next files are read, so
memory stays flat however large the folder. Chunks already stored are not embedded again, and a
file stored before and unchanged since (same bytes, same chunking, embedder and reader; see
``_fingerprint``) is not even read: its stored chunks are counted as reused. When a file has
changed, the chunks of its earlier version are removed. The report lists every file met with its
status.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from synth.data import Chunk
from synth.errors import ConfigError
from synth.ingest import ChunkingConfig, as_chunking_config
from synth.ingest.web import WebOptions
from synth.store._reads import FileRead, Reads, read_here
from synth.store._reingest import FileMemory
from synth.store._writer import BackgroundWriter
from synth.store.chroma import (
    DEFAULT_STORE_PATH,
    AddResult,
    ChunkStore,
    MetadataValue,
    PreparedChunks,
)
from synth.store.embedder import Embedder
from synth.store.embedders import make_embedder

logger = logging.getLogger("synth.store")


class IngestedFile(BaseModel):
    """One file met by ``ingest`` and what became of it."""

    path: str
    status: str  # "ok", "error" or "skipped"
    reason: str = ""
    chunks: int = 0
    tokens: int = 0
    document_id: str | None = None  # the stored document, for a file that is "ok"
    unchanged: bool = False  # stored before and unchanged since: not read again, chunks reused


class IngestReport(BaseModel):
    """What one ``ingest`` run did: every file with its status, and the totals."""

    files: list[IngestedFile] = Field(default_factory=list)
    chunks: int = 0  # chunks of the "ok" files (cut now, or stored before and unchanged)
    tokens: int = 0  # tokens in those chunks
    embedded: int = 0  # chunks embedded now
    reused: int = 0  # chunks already stored, not embedded again
    unchanged: int = 0  # "ok" files stored before and unchanged since: not read again
    removed: int = 0  # earlier versions of changed files whose chunks were removed
    embedder: str = ""  # the embedder's spec, e.g. "hash:384"
    notice: str | None = None  # why this embedder, when none was named
    collection: str = ""
    store: str = ""  # the store's folder or server URL

    def counts(self) -> dict[str, int]:
        """``{"ok": n, "error": n, "skipped": n}`` (every key present)."""
        counted = Counter(f.status for f in self.files)
        return {status: counted.get(status, 0) for status in ("ok", "error", "skipped")}

    @property
    def any_read(self) -> bool:
        """Whether at least one file is "ok" (read now, or stored before and unchanged)."""
        return any(f.status == "ok" for f in self.files)

    def to_json(self) -> dict[str, Any]:
        """The ``synth ingest --json`` object."""
        return {
            "files": [
                f.model_dump(include={"path", "status", "reason", "chunks"}) for f in self.files
            ],
            "chunks": self.chunks,
            "tokens": self.tokens,
            "embedded": self.embedded,
            "reused": self.reused,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "embedder": self.embedder,
            "collection": self.collection,
        }


def ingest_documents(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    store: ChunkStore | None = None,
    embedder: Embedder | str | None = None,
    chunking: ChunkingConfig | Mapping[str, Any] | None = None,
    store_path: str | os.PathLike[str] = DEFAULT_STORE_PATH,
    store_url: str | None = None,
    password: str | None = None,
    on_file: Callable[[IngestedFile], None] | None = None,
    ray: str | bool | None = None,
    web: WebOptions | None = None,
) -> IngestReport:
    """Load, chunk, embed and store the files under ``paths``; return what happened to each.

    Give a ``store``, or let one be opened from ``embedder`` (an Embedder or spec; ``None`` picks
    the default), ``chunking``, and ``store_path``/``store_url``. ``password`` opens encrypted
    PDFs. ``on_file`` is called with each file's row as soon as that file is done. ``ray`` (a
    cluster address, or True for a Ray started for this call) reads, chunks and embeds the files
    as Ray tasks, this process storing them (see :mod:`synth.store.ray_ingest`). ``web`` says
    how the URLs among ``paths`` are read (:mod:`synth.ingest.web`; their crawl state is kept in
    the store's folder).
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ConfigError("ingest needs at least one file or folder")
    if store is not None:
        if ray:
            raise ConfigError("ingest with ray opens its own store: give store_path or store_url")
        _check_matches(store, embedder, chunking)
        return start_ingest(paths, store, password=password, on_file=on_file, web=web).finish()
    made = make_embedder(embedder)
    reads: Reads = read_here
    store_embedder: Embedder = made
    if ray:
        from synth.store.ray_ingest import RayReads

        reads = RayReads(ray, made)
        store_embedder = reads.embedder
    try:
        with ChunkStore(
            store_embedder, path=store_path, url=store_url, chunking=chunking
        ) as opened:
            started = start_ingest(
                paths, opened, password=password, on_file=on_file, reads=reads, web=web
            )
            return started.finish()
    finally:
        if made is not embedder:  # made here from a spec
            made.close()


@dataclass
class _Batch:
    """One write for the background writer: chunks to store, with what goes with them."""

    chunks: list[Chunk] = field(default_factory=list)
    prepared: PreparedChunks | None = None  # the chunks, looked up and embedded already
    marks: dict[str, dict[str, MetadataValue]] = field(default_factory=dict)  # fingerprints
    stale: list[str] = field(default_factory=list)  # document ids of earlier versions
    refresh: dict[str, dict[str, MetadataValue]] = field(default_factory=dict)  # stored stats


#: chunks read before they go to the writer together: each Chroma add costs about 6 ms besides
#: its records (0.31 s for 600 records in adds of 64, 0.25 s in one add); 256 keep the heap's peak
#: where 64 had it (24.4 MiB at 4,000 PDF pages, where 512 made it 28.8)
CHUNKS_PER_WRITE = 256


def start_ingest(
    paths: Sequence[str | os.PathLike[str]],
    store: ChunkStore,
    *,
    password: str | None = None,
    on_file: Callable[[IngestedFile], None] | None = None,
    keep_chunks: bool = False,
    hold_writes: bool = False,
    reads: Reads = read_here,
    web: WebOptions | None = None,
) -> PendingIngest:
    """Read and chunk every file under ``paths`` into ``store``; return as soon as the last file
    is chunked, its writes (embedding, storing) still running in the background: call
    :meth:`PendingIngest.finish` before reading the store, and before closing it.

    ``keep_chunks`` keeps the chunks of the files read in :attr:`PendingIngest.chunks`.
    ``hold_writes`` starts the writes (all of them embedding too) only once every file is read,
    so they do not slow the reading; it holds every chunk in memory until written.
    ``reads`` reads the files (:func:`~synth.store._reads.read_here`: in this process)."""
    run = _Reading(store, keep_chunks=keep_chunks, hold_writes=hold_writes)
    try:
        for read in reads(paths, store, password=password, skip=run.memory.skip, web=web):
            row = run.read(read)
            del read  # the text is let go as soon as it is chunked, before the next file
            if on_file is not None:
                on_file(row)
            run.flush_if_full()
        run.finish_reading()
    except BaseException:
        run.pending.close()
        raise
    return run.pending


class _Reading:
    """One :func:`start_ingest` while it reads: each file chunked into the report, its chunks
    batched for the background writer, which embeds and stores them."""

    def __init__(self, store: ChunkStore, *, keep_chunks: bool, hold_writes: bool) -> None:
        self.store = store
        self.report = IngestReport(
            embedder=store.embedder.name,
            notice=store.embedder.notice,
            collection=store.collection_name,
            store=store.url or str(store.path),
        )
        self.memory = FileMemory(store)
        self.keep_chunks = keep_chunks
        self.hold_writes = hold_writes
        self.added = AddResult()
        self.writer: BackgroundWriter[_Batch] = BackgroundWriter(
            self._write, name="ingest-writer", depth=None if hold_writes else 1, paused=hold_writes
        )
        self.pending = PendingIngest(self.report, self.writer, self.added, store)
        if not hold_writes:  # writes start at once, batch after batch: nothing is published
            self.pending.publish(None)
        #: with ``hold_writes``, every batch, to be embedded before the first is stored
        self.held: list[_Batch] = []
        self.batch = _Batch()
        self.flush_at = max(store.embedder.batch_size, CHUNKS_PER_WRITE)

    def read(self, read: FileRead) -> IngestedFile:
        """The row of one file met: its chunks queued (or its stored ones counted as reused)."""
        status, document_id = read.status, read.document_id
        row = IngestedFile(path=status.path, status=status.status, reason=status.reason)
        stored = self.memory.unchanged(status.path)
        if stored is not None:
            row.chunks, row.tokens = stored.chunks, stored.tokens
            row.document_id, row.unchanged = stored.document_id, True
            self.report.unchanged += 1
            self.report.reused += stored.chunks
        elif document_id is not None:
            row.document_id = document_id
            head = self._chunk(read.chunks, document_id, row)
            if head:
                _queue(self.batch, self.memory, row, status.file, head)
            elif row.status == "ok":
                row.status, row.reason, row.document_id = "error", "no text to chunk", None
        self.report.files.append(row)
        self.report.chunks += row.chunks
        self.report.tokens += row.tokens
        return row

    def _chunk(self, chunks: Iterable[Chunk], document_id: str, row: IngestedFile) -> list[Chunk]:
        """Queue a document's ``chunks`` (as they are cut) but its first ones, which are returned.

        A file's chunks stream to the writer as they are cut, all but its first ones: those wait
        for its last, as they carry the file's fingerprint (its chunk and token counts), written
        last so a crash never leaves a half-stored file marked."""
        head: list[Chunk] = []
        kept: list[Chunk] = []
        flush_at = self.flush_at
        for chunk in chunks:
            if not head:  # older versions go first, once the file has a chunk to store
                stale = self.memory.stale(row.path, document_id)
                self.batch.stale.extend(stale)
                self.report.removed += len(stale)
            row.chunks += 1
            row.tokens += chunk.token_count
            if self.keep_chunks:
                kept.append(chunk)
            if len(head) < flush_at:
                head.append(chunk)
                continue
            self.batch.chunks.append(chunk)
            self.flush_if_full()
        if head and self.keep_chunks:
            self.pending.chunks[row.path] = kept
        return head

    def flush_if_full(self) -> None:
        """Send the batch to the writer once it holds a write's worth of chunks."""
        if len(self.batch.chunks) >= self.flush_at:
            self._submit(self.batch)
            self.batch = _Batch()

    def finish_reading(self) -> None:
        """Send what is left, with the stored stats to refresh, and let held writes start."""
        self.batch.refresh = self.memory.refresh
        if self.batch.chunks or self.batch.stale or self.batch.refresh:
            self._submit(self.batch)
        if self.hold_writes and not self.held:  # nothing to write: the store has every chunk
            self.pending.publish(None)
        self.writer.resume()

    def _submit(self, batch: _Batch) -> None:
        store = self.store
        if store.embedder.holds_gil and batch.chunks and not self.hold_writes:  # embed here
            batch.prepared = store.prepare(batch.chunks, assume_new=self.memory.empty)
            batch.chunks = []
        if self.hold_writes:
            self.held.append(batch)
        self.writer.submit(batch)

    def _embed_held(self) -> None:
        """Embed every held batch before storing the first, and publish the vectors, so a run can
        search them while Chroma stores them (about as long again). Only into a store that was
        empty: there no chunk is looked up in the store and no earlier version is removed first,
        so embedding ahead changes nothing of what is stored."""
        prepared: list[PreparedChunks] | None = None
        try:
            if self.memory.empty:
                for held in self.held:
                    if held.prepared is None and held.chunks:
                        held.prepared = self.store.prepare(held.chunks, assume_new=True)
                prepared = [held.prepared for held in self.held if held.prepared is not None]
        finally:
            self.pending.publish(prepared)  # a failed embedding publishes nothing, then raises
            self.held = []

    def _write(self, batch: _Batch) -> None:
        """Store one batch (in the writer's thread)."""
        store = self.store
        if self.held:  # the first write of held batches
            self._embed_held()
        if batch.stale:  # first, so a crash never leaves two versions of a file
            store.delete_documents(batch.stale)
        if batch.prepared is None and batch.chunks:
            batch.prepared = store.prepare(batch.chunks, assume_new=self.memory.empty)
        if batch.prepared is not None:
            result = store.commit(batch.prepared, marks=batch.marks)
            self.added.embedded += result.embedded
            self.added.reused += result.reused
        if batch.refresh:
            store.update_metadata(batch.refresh)


def _queue(
    batch: _Batch, memory: FileMemory, row: IngestedFile, file: str, head: list[Chunk]
) -> None:
    """Add a file's first chunks to ``batch``, with the file's fingerprint on the first."""
    mark = memory.fingerprint(row.path, file, chunks=row.chunks, tokens=row.tokens, note=row.reason)
    if mark is not None:
        batch.marks[head[0].id] = mark
    batch.chunks.extend(head)


def _check_matches(
    store: ChunkStore,
    embedder: Embedder | str | None,
    chunking: ChunkingConfig | Mapping[str, Any] | None,
) -> None:
    if embedder is not None:
        name = make_embedder(embedder).name
        if name != store.embedder.name:
            raise ConfigError(
                f"ingest got embedder {name!r} and a store using {store.embedder.name!r}; give one"
            )
    if chunking is not None:
        if as_chunking_config(chunking) != store.chunking:
            raise ConfigError("ingest got chunking settings that differ from the store's; give one")


class PendingIngest:
    """An ingest whose files are all read and chunked, while its last writes may still run.

    ``report`` has every file and the chunk and token totals at once; ``embedded`` and ``reused``
    are complete after :meth:`finish`. ``chunks`` holds, by path, the chunks of the files read now
    (with ``keep_chunks``), so a caller can start on them before they are stored, and
    :meth:`get_embeddings` gives their vectors before they are stored, where it can.
    """

    def __init__(
        self,
        report: IngestReport,
        writer: BackgroundWriter[Any],
        added: AddResult,
        store: ChunkStore,
    ) -> None:
        self.report = report
        self.chunks: dict[str, list[Chunk]] = {}
        self._writer = writer
        self._added = added
        self._store = store
        self._embedder = store.embedder
        self._lock = threading.Lock()
        self._done = False
        #: set once the vectors of the chunks embedded now are known (or known not to come)
        self._embedded = threading.Event()
        self._vectors: dict[str, np.ndarray] | None = None
        #: the embedder's ``batches_embedded`` once every chunk is embedded (at :meth:`publish`
        #: of held writes' vectors, else once every write is done: :meth:`finish`)
        self.embedder_batches: int | None = None

    def publish(self, prepared: Iterable[PreparedChunks] | None) -> None:
        """Hand over the vectors of every chunk embedded now, before they are stored (None: they
        will not all be known before the store has them); called once, by the writer."""
        if prepared is not None:
            # every chunk is embedded (held writes embed them all first): what the embedder sent
            # from now on is not the ingest's (a run's deduplication shares it)
            self.embedder_batches = self._embedder.batches_embedded
            self._vectors = {
                chunk.id: row
                for batch in prepared
                for chunk, row in zip(batch.new, batch.vectors, strict=True)
            }
        self._embedded.set()

    def get_embeddings(self, ids: Sequence[str]) -> np.ndarray:
        """The vectors of these chunks, one float32 row per id in the order asked (from any thread).

        When every one of them was embedded by this ingest and the writer has published them, they
        come from memory, while they may still be being stored; otherwise from the store, once
        every chunk is stored (:meth:`finish`; a failed write raises here), and the store rests
        after (:meth:`~synth.store.chroma.ChunkStore.rest`)."""
        self._embedded.wait()
        vectors = self._vectors
        if vectors is not None and ids and all(i in vectors for i in ids):
            return np.asarray([vectors[i] for i in ids], dtype=np.float32)
        self.finish()
        stored = self._store.get_embeddings(ids)
        # a run reads its chunks' vectors once (its chunk index holds them): Chroma's own copy
        # of the collection's, in memory since the first call, is let go (see ChunkStore.rest)
        self._store.rest()
        return stored

    def raise_if_failed(self) -> None:
        """Raise the error of a write that failed so far, without waiting for the others."""
        self._writer.raise_if_failed()

    def finish(self) -> IngestReport:
        """Wait until every chunk is stored (from any thread; once is enough) and return the
        complete report; a failed write raises here."""
        with self._lock:
            if not self._done:
                try:
                    self._writer.finish()
                finally:
                    self._embedded.set()  # every write is over: nothing more is published
                self._done = True
                if self.embedder_batches is None:
                    self.embedder_batches = self._embedder.batches_embedded
                self.report.embedded = self._added.embedded
                self.report.reused += self._added.reused
                log_report(self.report)
        return self.report

    def close(self, then: Callable[[], None] | None = None) -> None:
        """Stop after the write under way (the others are dropped); raises nothing. For a caller
        that failed before :meth:`finish`. With ``then`` (closing the store), return at once:
        the write under way ends in the writer's thread, which calls ``then()`` after it (a run
        stopped by Ctrl-C does not wait for it to record that it stopped)."""
        with self._lock:
            if not self._done:
                self._done = True
                if then is not None:
                    self._writer.cancel_then(then)
                    then = None
                else:
                    self._writer.cancel()
        self._embedded.set()  # nothing more is published: a waiter reads the store
        if then is not None:
            then()


def log_report(report: IngestReport) -> None:
    counts = report.counts()
    logger.info(
        "ingest: %d files (%d ok, %d error, %d skipped; %d unchanged, not read), %d chunks, "
        "%d tokens, %d embedded, %d reused, %d earlier versions removed, into %s",
        len(report.files),
        counts["ok"],
        counts["error"],
        counts["skipped"],
        report.unchanged,
        report.chunks,
        report.tokens,
        report.embedded,
        report.reused,
        report.removed,
        report.collection,
    )


__all__ = ["IngestReport", "IngestedFile", "PendingIngest", "ingest_documents", "start_ingest"]
