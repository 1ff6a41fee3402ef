"""Stage 1 for a run: ingest the documents and find the chunks that belong to this run."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from synth._run_manifest import stage_row
from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ConfigError


def ingest_for_run(
    paths: list[str],
    config: ContextConstructionConfig,
    embedder: Any,
    *,
    store_path: str | os.PathLike[str],
    store_url: str | None = None,
) -> tuple[Any, Any, list[Chunk]]:
    """Load, chunk (``config``'s chunk size, overlap and encoding), embed and store the files
    under ``paths``; return the open store, the ingest report and the chunks of the files read.

    When no file could be read, one ConfigError line says why for each file (the first few)."""
    from synth.ingest import make_chunking_config
    from synth.store import ChunkStore, ingest_documents

    sizes: dict[str, Any] = {"chunk_size": config.chunk_size, "chunk_overlap": config.chunk_overlap}
    if config.encoding is not None:
        sizes["encoding"] = config.encoding
    chunking = make_chunking_config(**sizes)
    store = ChunkStore(embedder, path=store_path, url=store_url, chunking=chunking)
    try:
        report = ingest_documents(paths, store=store)
        if not report.any_read:
            raise ConfigError(nothing_read(paths, report.files))
        chunks = chunks_of_run(report, store, paths, chunking)
    except BaseException:
        store.close()
        raise
    return store, report, chunks


#: files named in the "no document could be read" line before "and N more"
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


#: source files per store read in :func:`chunks_of_run`
SOURCES_PER_READ = 256


def chunks_of_run(report: Any, store: Any, paths: list[str], chunking: Any) -> list[Chunk]:
    """The stored chunks of the files this run read (not other folders sharing the store), file
    by file in the report's order."""
    sources = [row.path for row in report.files if row.status == "ok"]
    by_source: dict[str, list[Chunk]] = {source: [] for source in sources}
    for start in range(0, len(sources), SOURCES_PER_READ):
        for chunk in store.chunks(source=sources[start : start + SOURCES_PER_READ]):
            by_source[chunk.source].append(chunk)
    chunks: list[Chunk] = []
    stale = False
    for found in by_source.values():
        if len({c.document_id for c in found}) > 1:
            stale = True  # the file changed since an earlier ingest: its old chunks are stored too
        chunks.extend(found)
    if stale:
        from synth.ingest import chunk_documents, load_documents

        loaded = load_documents(paths)
        current = {c.id for c in chunk_documents(loaded.documents, chunking)}
        chunks = [c for c in chunks if c.id in current]
    return chunks


def ingest_row(report: Any) -> dict[str, Any]:
    """The manifest row of stage 1: files met, files read, the others by status and reason."""
    dropped: Counter[str] = Counter()
    for f in report.files:
        if f.status != "ok":
            dropped[f"{f.status}: {f.reason}" if f.reason else f.status] += 1
    read = sum(1 for f in report.files if f.status == "ok")
    return stage_row("ingest", len(report.files), read, dropped)


__all__ = ["SHOWN_FILES", "chunks_of_run", "ingest_for_run", "ingest_row", "nothing_read"]
