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


#: characters encoded at a time, so a long document is never copied whole to bytes to be hashed
_SLICE = 1 << 20


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        slices = range(0, len(part), _SLICE)
        size = sum(len(_utf8(part[i : i + _SLICE])) for i in slices)
        digest.update(size.to_bytes(8, "big"))  # length-prefixed: no two part lists collide
        for i in slices:
            digest.update(_utf8(part[i : i + _SLICE]))
    return digest.hexdigest()[:ID_LENGTH]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")
