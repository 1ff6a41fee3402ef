"""What an ingest did: every file met with its status (:class:`IngestedFile`), and the totals."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field


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


__all__ = ["IngestReport", "IngestedFile"]
