"""A Chroma collection another program made, read as a run's chunks with the vectors it holds.

``--from-chroma PATH:COLLECTION`` (or ``Synthesizer.generate_goldens_from_chroma``) takes a
collection built with chromadb directly, whatever embedding function and metadata keys it used:
its documents are the chunks, as they are, and its stored embeddings are what grouping compares,
so nothing is embedded again (the collection is opened without an embedding function). How a
record's metadata names its source (:data:`SOURCE_KEYS`), place and page is in docs/sources.md;
its document is its ``document_id``/``doc_id``/``ref_doc_id``, else its source. A record
without text or without a vector is left out and counted (:class:`ImportedCollection`'s
``report``, one row per source plus one per kind left out).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synth._ids import text_hash
from synth._tokens import count_tokens
from synth.data import Chunk
from synth.errors import ConfigError
from synth.store._chroma_client import read_records, with_scheme
from synth.store.ingest_run import IngestedFile, IngestReport

#: metadata keys naming a record's source file, in the order they are looked for
SOURCE_KEYS = ("source", "file_path", "file", "filename", "file_name", "path", "url")
DOCUMENT_KEYS = ("document_id", "doc_id", "ref_doc_id")
INDEX_KEYS = ("index", "chunk_index")


@dataclass
class ImportedCollection:
    """The chunks of a collection, one vector row each (as stored), and what was read."""

    name: str
    chunks: list[Chunk]
    vectors: np.ndarray
    report: IngestReport


def parse_chroma_spec(spec: str) -> tuple[str, str]:
    """``PATH:COLLECTION`` (a folder, or a server ``http://host:port``) as its two parts."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name or "/" in name:
        raise ConfigError(
            f"--from-chroma wants PATH:COLLECTION (a Chroma folder or http://host:port, a colon, "
            f"the collection's name), got {spec!r}"
        )
    return where, name


def read_chroma_collection(location: str | os.PathLike[str], name: str) -> ImportedCollection:
    """The collection ``name`` in the Chroma folder (or server URL) ``location``, as chunks and
    their stored vectors; ConfigError when there is no such folder or nothing usable in it."""
    where = os.fspath(location)
    url = with_scheme(where) if where.lower().startswith(("http://", "https://")) else None
    path = None if url else Path(where)
    if path is not None and not (path / "chroma.sqlite3").is_file():
        raise ConfigError(f"no Chroma store at {where} (no chroma.sqlite3 in that folder)")
    chunks: list[Chunk] = []
    rows: list[Any] = []
    left_out: Counter[str] = Counter()
    per_source: Counter[str] = Counter()
    for ids, documents, metadatas, embeddings in read_records(path, url, name):
        for row, record_id in enumerate(ids):
            text = documents[row] if row < len(documents) else None
            vector = embeddings[row] if row < len(embeddings) else None
            if not isinstance(text, str) or not text.strip():
                left_out["no document text"] += 1
                continue
            if vector is None or len(vector) == 0:
                left_out["no embedding"] += 1
                continue
            metadata = dict(metadatas[row] or {}) if row < len(metadatas) else {}
            source = _first(metadata, SOURCE_KEYS) or name
            chunks.append(_chunk(str(record_id), text, metadata, source, per_source[source]))
            per_source[source] += 1
            rows.append(vector)
    if not chunks:
        why = ", ".join(f"{n} with {reason}" for reason, n in left_out.items()) or "it is empty"
        raise ConfigError(f"collection {name!r} at {where} has no record to use: {why}")
    try:
        vectors = np.asarray(rows, dtype=np.float32)
    except ValueError:
        raise ConfigError(f"collection {name!r} holds vectors of different lengths") from None
    return ImportedCollection(name, chunks, vectors, _report(name, chunks, left_out))


def _chunk(record_id: str, text: str, metadata: dict[str, Any], source: str, place: int) -> Chunk:
    index = _first_int(metadata, INDEX_KEYS)
    page = _page(metadata)
    return Chunk(
        id=record_id,
        document_id=_first(metadata, DOCUMENT_KEYS) or "src_" + text_hash(source, 24),
        source=source,
        index=place if index is None else index,
        text=text,
        token_count=count_tokens(text),
        page_start=page,
        page_end=page,
        metadata={k: v for k, v in metadata.items() if isinstance(v, str | int | float | bool)},
    )


def _first(metadata: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _first_int(metadata: dict[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        value = metadata.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def _page(metadata: dict[str, Any]) -> int | None:
    page = metadata.get("page")
    if isinstance(page, int) and not isinstance(page, bool) and page >= 0:
        return page + 1  # LangChain's PDF loaders count pages from 0
    label = metadata.get("page_label")
    if isinstance(label, str) and label.isdigit():
        return int(label)
    return None


def _report(name: str, chunks: list[Chunk], left_out: Counter[str]) -> IngestReport:
    """One ``ok`` row per source with its chunks and tokens, one ``skipped`` row per kind of
    record left out; nothing embedded, every chunk reused."""
    report = IngestReport(embedder="(the collection's own vectors)", collection=name, store="")
    rows: dict[str, IngestedFile] = {}
    for chunk in chunks:
        row = rows.setdefault(
            chunk.source,
            IngestedFile(path=chunk.source, status="ok", document_id=chunk.document_id),
        )
        row.chunks += 1
        row.tokens += chunk.token_count
    report.files = list(rows.values())
    for reason, count in left_out.items():
        report.files.append(
            IngestedFile(path=f"{count} record(s) of {name}", status="skipped", reason=reason)
        )
    report.chunks = len(chunks)
    report.tokens = sum(chunk.token_count for chunk in chunks)
    report.reused = len(chunks)
    return report


__all__ = [
    "DOCUMENT_KEYS",
    "INDEX_KEYS",
    "SOURCE_KEYS",
    "ImportedCollection",
    "parse_chroma_spec",
    "read_chroma_collection",
]
