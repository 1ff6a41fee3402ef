"""``ingest_documents(paths)``: load, chunk, embed and store documents, one file at a time.

Files stream through: each loaded document is chunked at once and its chunks wait in a small buffer
that is embedded and stored when full, so memory stays flat however large the folder. Chunks
already stored are not embedded again. The report lists every file met with its status.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from synth.data import Chunk
from synth.errors import ConfigError
from synth.ingest import ChunkingConfig, chunk_documents, iter_load, make_chunking_config
from synth.store.chroma import DEFAULT_STORE_PATH, AddResult, ChunkStore
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


class IngestReport(BaseModel):
    """What one ``ingest`` run did: every file with its status, and the totals."""

    files: list[IngestedFile] = Field(default_factory=list)
    chunks: int = 0  # chunks cut from the files read
    tokens: int = 0  # tokens in those chunks
    embedded: int = 0  # chunks embedded now
    reused: int = 0  # chunks already stored, not embedded again
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
        """Whether at least one file was read."""
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
) -> IngestReport:
    """Load, chunk, embed and store the files under ``paths``; return what happened to each.

    Give a ``store``, or let one be opened from ``embedder`` (an Embedder or spec; ``None`` picks
    the default), ``chunking``, and ``store_path``/``store_url``. ``password`` opens encrypted
    PDFs. ``on_file`` is called with each file's row as soon as that file is done.
    """
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    paths = list(paths)
    if not paths:
        raise ConfigError("ingest needs at least one file or folder")
    if store is not None:
        _check_matches(store, embedder, chunking)
        return _ingest(paths, store, password, on_file)
    with ChunkStore(embedder, path=store_path, url=store_url, chunking=chunking) as opened:
        return _ingest(paths, opened, password, on_file)


def _ingest(
    paths: list[str | os.PathLike[str]],
    store: ChunkStore,
    password: str | None,
    on_file: Callable[[IngestedFile], None] | None,
) -> IngestReport:
    report = IngestReport(
        embedder=store.embedder.name,
        notice=store.embedder.notice,
        collection=store.collection_name,
        store=store.url or str(store.path),
    )
    added = AddResult()
    pending: list[Chunk] = []
    flush_at = max(store.embedder.batch_size, 64)
    for loaded in iter_load(paths, password=password):
        status = loaded.status
        row = IngestedFile(path=status.path, status=status.status, reason=status.reason)
        if loaded.document is not None:
            chunks = chunk_documents([loaded.document], store.chunking)
            row.chunks = len(chunks)
            row.tokens = sum(chunk.token_count for chunk in chunks)
            if not chunks and row.status == "ok":
                row.status, row.reason = "error", "no text to chunk"
            pending.extend(chunks)
            if len(pending) >= flush_at:
                added += store.add(pending)
                pending = []
        report.files.append(row)
        report.chunks += row.chunks
        report.tokens += row.tokens
        if on_file is not None:
            on_file(row)
    if pending:
        added += store.add(pending)
    report.embedded, report.reused = added.embedded, added.reused
    counts = report.counts()
    logger.info(
        "ingest: %d files (%d ok, %d error, %d skipped), %d chunks, %d tokens, "
        "%d embedded, %d reused, into %s",
        len(report.files),
        counts["ok"],
        counts["error"],
        counts["skipped"],
        report.chunks,
        report.tokens,
        report.embedded,
        report.reused,
        report.collection,
    )
    return report


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
        config = (
            chunking if isinstance(chunking, ChunkingConfig) else make_chunking_config(**chunking)
        )
        if config != store.chunking:
            raise ConfigError("ingest got chunking settings that differ from the store's; give one")


__all__ = ["IngestReport", "IngestedFile", "ingest_documents"]
