"""Stage 1 of the runs from what the user already has: documents and chunks as objects, a Chroma collection.

The Synthesizer's ``generate_goldens_from_documents`` takes the user's own documents or chunks
(LangChain ``Document``s, LlamaIndex nodes, dicts, strings: :mod:`synth.ingest.objects`) and runs
stage 1 on them as on files: chunked (or, with ``chunk=False``, each one chunk as it is), embedded
and stored, the chunks already stored reused. ``generate_goldens_from_chroma`` takes a
collection another program built (:mod:`synth.store.imported`): its documents are the chunks and
its stored vectors are what grouping compares, so stage 1 embeds nothing; and since another
embedder made them, no input vector is ever compared with them (the dense difficulty rank is left
out, as for a run whose contexts were embedded by another embedder).

Either way the rest is a run from documents (:meth:`Synthesizer._docs`): select, critic, group,
generate, exactly N. A golden's ``source_files`` are the sources the objects or records name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from synth._ids import chunk_id, document_id
from synth.data import Chunk, Document

if TYPE_CHECKING:
    from synth.ingest.web import WebOptions
    from synth.store import ChunkStore
    from synth.store._reads import FileRead
    from synth.store.imported import ImportedCollection
    from synth.store.ingest_run import IngestReport

#: the run modes these runs record
DOCUMENTS_MODE = "documents"
CHROMA_MODE = "chroma"
#: the chunking key of a chunk given as it is (its id's parameters part)
AS_GIVEN = "as-given"


def given_reads(documents: Sequence[Document], chunked: bool) -> Callable[..., Iterator[FileRead]]:
    """A ``Reads`` for :func:`~synth.store.ingest_run.start_ingest` that reads ``documents``
    instead of files: each one chunked as a file is, or one chunk as it is."""
    from synth.ingest import FileStatus, iter_chunks
    from synth.store._reads import FileRead

    def reads(
        paths: Sequence[str | os.PathLike[str]],
        store: ChunkStore,
        *,
        password: str | None,
        skip: Any,
        web: WebOptions | None = None,
    ) -> Iterator[FileRead]:
        if chunked:
            for document in documents:
                status = FileStatus(
                    path=document.path,
                    status="ok",
                    document_id=document.id,
                    chars=len(document.text),
                )
                yield FileRead(status, document.id, iter_chunks([document], store.chunking))
            return
        for source, parts in _by_source(documents).items():
            owner = document_id(source, "\x1e".join(part.text for part in parts))
            chunks = [
                as_chunk(part, owner, index, store.chunking.encoding)
                for index, part in enumerate(parts)
            ]
            status = FileStatus(
                path=source, status="ok", document_id=owner, chars=sum(len(p.text) for p in parts)
            )
            yield FileRead(status, owner, chunks)

    return reads


def _by_source(documents: Sequence[Document]) -> dict[str, list[Document]]:
    grouped: dict[str, list[Document]] = {}
    for document in documents:
        grouped.setdefault(document.path, []).append(document)
    return grouped


def as_chunk(part: Document, owner: str, index: int, encoding: str) -> Chunk:
    """``part`` (the user's own chunk) as chunk ``index`` of the document ``owner``, its text as
    it is."""
    from synth._language import LANGUAGE_KEY, detect_language
    from synth._tokens import count_tokens

    metadata: dict[str, Any] = {"start": 0, "end": len(part.text)}
    language = detect_language(part.text)
    if language is not None:
        metadata[LANGUAGE_KEY] = language
    return Chunk(
        id=chunk_id(owner, AS_GIVEN, index),
        document_id=owner,
        source=part.path,
        index=index,
        text=part.text,
        token_count=count_tokens(part.text, encoding),
        metadata=metadata,
    )


class ImportedIngest:
    """Stage 1 of a run from a Chroma collection: every chunk already there with its vector.

    It stands where a run's ingest under way stands (:class:`~synth.store.ingest_run.PendingIngest`):
    the report, the vectors of the chunks (from memory, the collection's own), nothing to wait for.
    """

    def __init__(self, imported: ImportedCollection, batches: int) -> None:
        self.report: IngestReport = imported.report
        self.chunks: dict[str, list[Chunk]] = {}
        for chunk in imported.chunks:
            self.chunks.setdefault(chunk.source, []).append(chunk)
        self._rows = {chunk.id: row for row, chunk in enumerate(imported.chunks)}
        self._vectors = imported.vectors
        #: the run's embedder sent nothing for this stage
        self.embedder_batches = batches

    def get_embeddings(self, ids: Sequence[str]) -> np.ndarray:
        return np.asarray(self._vectors[[self._rows[i] for i in ids]], dtype=np.float32)

    def raise_if_failed(self) -> None:
        return None

    def finish(self) -> IngestReport:
        return self.report

    def close(self, then: Callable[[], None] | None = None) -> None:
        if then is not None:
            then()


class NoStore:
    """The store of a run from a collection read into memory: nothing to close."""

    def close(self) -> None:
        return None


__all__ = [
    "AS_GIVEN",
    "CHROMA_MODE",
    "DOCUMENTS_MODE",
    "ImportedIngest",
    "NoStore",
    "as_chunk",
    "given_reads",
]
