"""The records that cross stages, in the order the data flows.

``Document`` (ingest) -> ``Chunk`` (ingest, store) -> ``Context`` (contexts) -> ``Golden`` (generate,
dataset, evaluate). All are pydantic models: validated on construction, serialisable as JSON.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Page(BaseModel):
    """Where one page of a document starts in its text (PDFs; 1-based page numbers)."""

    model_config = ConfigDict(frozen=True)

    number: int
    start: int  # character offset of the page's first character in Document.text


class Document(BaseModel):
    """One parsed source file."""

    id: str  # stable: derived from the path and the content
    path: str  # the path as given by the user's walk (relative to the root walked when possible)
    text: str
    pages: list[Page] = Field(default_factory=list)  # empty for formats without pages
    metadata: dict[str, Any] = Field(default_factory=dict)


class Chunk(BaseModel):
    """A token-bounded piece of a document; what the store embeds and contexts are built from."""

    id: str  # stable: derived from the document content and the chunking parameters
    document_id: str
    source: str  # Document.path
    index: int  # position within its document, from 0
    text: str
    token_count: int
    page_start: int | None = None
    page_end: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Context(BaseModel):
    """Related chunks that one golden is generated from."""

    id: str
    chunk_ids: list[str]
    texts: list[str]
    source_files: list[str]
    quality: float | None = None  # the critic's mean score, 0..1, when scored
    metadata: dict[str, Any] = Field(default_factory=dict)


class Golden(BaseModel):
    """One evaluation example: the example fields of judgeval's ``Example`` plus provenance."""

    model_config = ConfigDict(extra="forbid")

    input: str
    actual_output: str | None = None
    expected_output: str | None = None
    context: list[str] | None = None  # the ground-truth chunks it was made from
    retrieval_context: list[str] | None = None
    context_ids: list[str] = Field(default_factory=list)
    source_files: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input")
    @classmethod
    def _input_not_blank(cls, value: str) -> str:
        # a golden without a question cannot be asked of any system
        if not value.strip():
            raise ValueError("input must not be empty or blank")
        return value


__all__ = ["Chunk", "Context", "Document", "Golden", "Page"]
