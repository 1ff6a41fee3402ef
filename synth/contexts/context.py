"""A Context from its chunks: its stable id, the seed, the similarities, the chunks' pages and
heading paths, and the seed's language."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synth._ids import joined_hash
from synth._language import LANGUAGE_KEY, detect_language
from synth.data import Chunk, Context


def context_id(chunk_ids: Sequence[str]) -> str:
    """A stable id for a context made of these chunks, in this order."""
    return "ctx_" + joined_hash(chunk_ids, 16)


def make_context(
    chunks: Sequence[Chunk],
    *,
    quality: float | None = None,
    similarities: Sequence[float] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Context:
    """A Context from chunks (the seed first); ``similarities`` to the seed go in its metadata."""
    ids = [c.id for c in chunks]
    meta: dict[str, Any] = {"seed_chunk_id": ids[0] if ids else None}
    if similarities is not None:
        meta["similarities"] = [round(float(s), 6) for s in similarities]
    pages = [_page_breaks(c) for c in chunks]
    if any(p is not None for p in pages):
        meta["pages"] = pages  # per chunk, for the pages of citations (synth.generate.citations)
    headings = [[str(h) for h in c.metadata.get("heading_path") or []] for c in chunks]
    if any(headings):
        meta["heading_paths"] = headings  # per chunk: where each passage sits in its file
    language = chunk_language(chunks[0]) if chunks else None
    if language is not None:
        meta[LANGUAGE_KEY] = language  # the seed's: the questions are asked about it
    meta.update(metadata or {})
    return Context(
        id=context_id(ids),
        chunk_ids=ids,
        texts=[c.text for c in chunks],
        source_files=[c.source for c in chunks],
        quality=quality,
        metadata=meta,
    )


def chunk_language(chunk: Chunk) -> str | None:
    """The language ``chunk`` recorded at ingest; detected now for a chunk stored before
    languages were (None when too short to tell)."""
    recorded = chunk.metadata.get(LANGUAGE_KEY)
    return str(recorded) if recorded else detect_language(chunk.text)


def _page_breaks(chunk: Chunk) -> list[list[int]] | None:
    """``[page, offset]`` where each of the chunk's pages starts in its text; None without pages.

    Chunks stored before page breaks were recorded know only their page span: one page is enough.
    """
    breaks = chunk.metadata.get("pages")
    if breaks is not None:
        return [[int(number), int(offset)] for number, offset in breaks]
    if chunk.page_start is not None and chunk.page_start == chunk.page_end:
        return [[chunk.page_start, 0]]
    return None


__all__ = ["chunk_language", "context_id", "make_context"]
