"""Chunk <-> Chroma record: what is stored per chunk so the chunk can be rebuilt exactly.

Chroma metadata holds only str, int, float and bool, never None: a missing page span is left out,
and the chunk's own metadata dict travels as one JSON string.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from synth.data import Chunk

_EXTRA = "chunk_metadata"


def to_metadata(chunk: Chunk) -> dict[str, str | int | float | bool]:
    """The Chroma metadata of ``chunk`` (its text is stored as the record's document)."""
    meta: dict[str, str | int | float | bool] = {
        "source": chunk.source,
        "document_id": chunk.document_id,
        "index": chunk.index,
        "token_count": chunk.token_count,
    }
    if chunk.page_start is not None:
        meta["page_start"] = chunk.page_start
    if chunk.page_end is not None:
        meta["page_end"] = chunk.page_end
    if chunk.metadata:
        meta[_EXTRA] = json.dumps(chunk.metadata, ensure_ascii=False, sort_keys=True, default=str)
    return meta


#: every field of a Chunk, the set each rebuilt chunk shares as the fields it was given: all of
#: them are (a set of its own was 728 bytes a chunk, a third of a chunk read back from a store)
_EVERY_FIELD = set(Chunk.model_fields)


def from_record(chunk_id: str, text: str | None, meta: Mapping[str, Any] | None) -> Chunk:
    """Rebuild the Chunk stored under ``chunk_id``."""
    meta = meta or {}
    extra = meta.get(_EXTRA)
    chunk = Chunk(
        id=chunk_id,
        # a file's chunks share one string of its path and of its document's id, not one each
        document_id=sys.intern(str(meta.get("document_id", ""))),
        source=sys.intern(str(meta.get("source", ""))),
        index=int(meta.get("index", 0)),
        text=text or "",
        token_count=int(meta.get("token_count", 0)),
        page_start=_optional_int(meta.get("page_start")),
        page_end=_optional_int(meta.get("page_end")),
        metadata=json.loads(extra) if isinstance(extra, str) else {},
    )
    # setting a field adds its name to this set, which holds every name already
    object.__setattr__(chunk, "__pydantic_fields_set__", _EVERY_FIELD)
    return chunk


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


__all__ = ["from_record", "to_metadata"]
