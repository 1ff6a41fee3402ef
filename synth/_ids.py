"""Ids and content hashes, all SHA-256: what every stable id in synth is computed with.

An id is a hash of what a thing is made from, never of run state, so the same inputs give the same
ids in every run. Each caller keeps its own serialisation and length (they are part of ids already
stored in run folders, caches and vector stores); this module is where the hashing happens.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ID_LENGTH = 32  # hex characters (128 bits) of a document or chunk id


def text_hash(text: str, length: int = 64) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``text`` in UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:length]


def joined_hash(parts: Iterable[str], length: int = 64, *, sep: str = "\x1f") -> str:
    """:func:`text_hash` of ``parts`` joined by ``sep`` (a control character no part holds)."""
    return text_hash(sep.join(parts), length)


def file_hash(path: str | Path) -> str:
    """The hex SHA-256 of a file's bytes, read a block at a time; OSError when it cannot be read."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


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


__all__ = [
    "ID_LENGTH",
    "canonical_json",
    "chunk_id",
    "document_id",
    "file_hash",
    "joined_hash",
    "text_hash",
]
