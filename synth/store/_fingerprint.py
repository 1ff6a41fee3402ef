"""File fingerprints: what lets a later ingest know a file is the one already stored, unread.

A file that was read, chunked and stored gets a fingerprint in the metadata of its first chunk
(index 0), written only once its other chunks are stored:

- ``file_stat``: its size, modification and change times in nanoseconds, and its inode;
- ``file_sha256``: the SHA-256 of its bytes, taken before it was read;
- ``file_setup``: a digest of everything else its chunks depend on: the chunking parameters (with
  the splitter version), the embedder's identity, the reader that read it and synth's version;
- ``file_chunks``, ``file_tokens``, ``file_note``: what the ingest report said of it;
- ``file_settled``: whether, when it was read, its modification time was old enough that any later
  write must change it. A write within the same tick of the file system's clock can leave size
  and times as they were, so the stat of a file modified just before it was read is not trusted:
  its bytes are hashed again next time (git's "racy clean" rule).

A later ingest skips a file whose fingerprint has the same setup and either the same stat (when
settled) or else the same SHA-256 (a touched but identical file: its stat is then refreshed).
Kept in the chunk collection itself, a fingerprint goes wherever the chunks go, on disk or on a
Chroma server, and can never outlive them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from synth._ids import file_hash, text_hash
from synth._version import __version__
from synth.ingest import ChunkingConfig, Loader
from synth.store.embedder import Embedder

#: how long after its last modification a file's stat is trusted to change with its content
SETTLE_NS = 2_000_000_000

STAT = "file_stat"
SHA256 = "file_sha256"
SETUP = "file_setup"
CHUNKS = "file_chunks"
TOKENS = "file_tokens"
NOTE = "file_note"
SETTLED = "file_settled"


class StoredFile(NamedTuple):
    """What the store remembers of one stored version of a file (from its first chunk)."""

    chunk_id: str  # the first chunk, which carries the fingerprint
    document_id: str
    stat: str = ""
    sha256: str = ""  # "" when the chunks were stored without a fingerprint
    setup: str = ""
    chunks: int = 0
    tokens: int = 0
    note: str = ""
    settled: bool = False


class DiskState(NamedTuple):
    """A file as found on disk just before it is read."""

    stat: str
    sha256: str
    settled: bool


def stored_file(chunk_id: str, meta: Mapping[str, Any]) -> StoredFile:
    """The stored version whose first chunk is ``chunk_id`` with metadata ``meta``."""
    return StoredFile(
        chunk_id=chunk_id,
        document_id=str(meta.get("document_id", "")),
        stat=str(meta.get(STAT, "")),
        sha256=str(meta.get(SHA256, "")),
        setup=str(meta.get(SETUP, "")),
        chunks=int(meta.get(CHUNKS, 0)),
        tokens=int(meta.get(TOKENS, 0)),
        note=str(meta.get(NOTE, "")),
        settled=bool(meta.get(SETTLED, False)),
    )


def stat_key(info: os.stat_result) -> str:
    """Size, mtime, ctime (ns) and inode: what changes when a file is written, replaced or copied
    over (a copy keeping the old mtime still gets a new ctime)."""
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}"


def is_settled(info: os.stat_result, now_ns: int) -> bool:
    """Whether ``info``'s mtime is far enough in the past for a later write to change it."""
    return now_ns - info.st_mtime_ns > SETTLE_NS


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file's bytes (read in blocks, never whole)."""
    return file_hash(path)


def setup_key(chunking: ChunkingConfig, embedder: Embedder, loader: Loader) -> str:
    """A digest of what a file's chunks depend on besides its bytes."""
    reader = getattr(loader, "func", loader)  # functools.partial (the PDF reader with a password)
    name = getattr(reader, "__qualname__", None) or type(reader).__qualname__  # or a callable
    blob = json.dumps(
        {
            "chunking": chunking.key(),
            "embedder": embedder.identity(),
            "reader": f"{getattr(reader, '__module__', '')}.{name}",
            "synth": __version__,
        },
        sort_keys=True,
        default=str,
    )
    return text_hash(blob, 32)


def fingerprint(
    state: DiskState, setup: str, *, chunks: int, tokens: int, note: str
) -> dict[str, str | int | float | bool]:
    """The metadata that marks a file's first chunk as the fingerprint of that file."""
    return {
        STAT: state.stat,
        SHA256: state.sha256,
        SETUP: setup,
        CHUNKS: chunks,
        TOKENS: tokens,
        NOTE: note,
        SETTLED: state.settled,
    }


__all__ = [
    "SETTLE_NS",
    "DiskState",
    "StoredFile",
    "fingerprint",
    "is_settled",
    "setup_key",
    "sha256_of",
    "stat_key",
    "stored_file",
]
