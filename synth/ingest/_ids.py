"""Stable ids for documents and chunks: hashes of what they are made from, never of run state."""

from __future__ import annotations

import hashlib

ID_LENGTH = 32  # hex characters (128 bits)


def document_id(path: str, text: str) -> str:
    """The id of a document: its display path and its text (so moving or editing it changes it)."""
    return _digest("document", path, text)


def chunk_id(document_id: str, params: str, index: int) -> str:
    """The id of a chunk: its document's id, the chunking parameters and its position."""
    return _digest("chunk", document_id, params, str(index))


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", errors="surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))  # length-prefixed: no two part lists collide
        digest.update(data)
    return digest.hexdigest()[:ID_LENGTH]
