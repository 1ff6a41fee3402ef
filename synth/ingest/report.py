"""What loading did, file by file: ``FileStatus`` for each file met, ``LoadReport`` for a run."""

from __future__ import annotations

from collections import Counter
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from synth.data import Document

Status = Literal["ok", "error", "skipped"]


class FileStatus(BaseModel):
    """One file (or skipped hidden folder) met while loading, and what became of it."""

    model_config = ConfigDict(frozen=True)

    path: str  # as shown to the user; equals Document.path for a file that loaded
    status: Status
    reason: str = ""  # one line: why it is an error or skipped, or a note on an ok file
    suffix: str = ""  # ".pdf", ".docx", ...; "" for a folder or a name without one
    file: str = ""  # the absolute path on this machine
    document_id: str | None = None
    pages: int | None = None  # pages of a PDF, slides of a deck, sheets, chapters of a book
    chars: int = 0  # characters of text extracted
    warnings: int = 0  # parser warnings counted and kept quiet (pypdf's font warnings, ...)


class LoadedFile(NamedTuple):
    """One result of ``iter_load``: the file's status and, when it was read, its document
    (``None`` for a file that could not be read, was skipped, or that a skip hook answered for)."""

    status: FileStatus
    document: Document | None


class LoadReport(BaseModel):
    """Everything ``load_documents`` read, and a status for every file it met."""

    documents: list[Document] = Field(default_factory=list)
    files: list[FileStatus] = Field(default_factory=list)

    @property
    def ok(self) -> list[FileStatus]:
        return [f for f in self.files if f.status == "ok"]

    @property
    def errors(self) -> list[FileStatus]:
        return [f for f in self.files if f.status == "error"]

    @property
    def skipped(self) -> list[FileStatus]:
        return [f for f in self.files if f.status == "skipped"]

    def counts(self) -> dict[str, int]:
        """``{"ok": n, "error": n, "skipped": n}`` (every key present)."""
        counted = Counter(f.status for f in self.files)
        return {status: counted.get(status, 0) for status in ("ok", "error", "skipped")}

    def summary(self) -> str:
        """One line, e.g. ``"12 files: 10 ok, 1 error, 1 skipped"``."""
        counts = self.counts()
        total = len(self.files)
        return (
            f"{total} file{'s' if total != 1 else ''}: {counts['ok']} ok, "
            f"{counts['error']} error{'s' if counts['error'] != 1 else ''}, "
            f"{counts['skipped']} skipped"
        )


__all__ = ["FileStatus", "LoadReport", "LoadedFile", "Status"]
