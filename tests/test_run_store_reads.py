"""A run reading its stored files back (synth.run.ingest over a real Chroma store): each read fits
one page, so Chroma matches each stored row about once, not once a page; once the run has read
its chunks' vectors, the store lets Chroma's in-memory index go (opened again when asked)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import synth.store.chroma as chroma
from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.run.ingest import chunks_of_run, ingest_for_run, read_groups
from synth.store import ChunkStore, HashEmbedder
from synth.store.ingest_run import IngestedFile, IngestReport

FILES, PER_FILE, PAGE = 24, 4, 10


def _chunk(source: str, index: int) -> Chunk:
    return Chunk(
        id=f"{source}#{index}",
        document_id=f"doc-{source}",
        source=source,
        index=index,
        text=f"notes on {source}, part {index}",
        token_count=5,
    )


def test_the_stored_files_are_read_in_reads_that_fit_one_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chroma, "READ_PAGE", PAGE)
    names = [f"f{n:02d}.md" for n in range(FILES)]
    store = ChunkStore(HashEmbedder(64), path=tmp_path / "chroma", collection="reads_test")
    try:
        store.add([_chunk(name, i) for name in names for i in range(PER_FILE)])
        collection = store._collection
        get = collection.get
        matched: list[int] = []

        def counting_get(**kwargs: Any) -> Any:
            # the rows Chroma matches for this read's filter, whatever page it asks for
            if kwargs.get("where") is not None:
                matched.append(len(get(where=kwargs["where"], include=[])["ids"]))
            return get(**kwargs)

        monkeypatch.setattr(collection, "get", counting_get)
        rows = [
            IngestedFile(path=n, status="ok", document_id=f"doc-{n}", chunks=PER_FILE)
            for n in names
        ]
        pending = SimpleNamespace(report=IngestReport(files=rows), chunks={})
        chunks = chunks_of_run(pending, store)
    finally:
        store.close()
    assert [(c.source, c.index) for c in chunks] == [(n, i) for n in names for i in range(PER_FILE)]
    # two files (8 chunks) a read, one page each: every row matched once; reading all 24 files
    # by pages of 10 would match all 96 rows on each of 10 pages
    assert len(matched) == FILES // 2
    assert sum(matched) == FILES * PER_FILE


def test_reads_are_grouped_by_the_chunks_the_report_counts() -> None:
    def rows(*chunks: int) -> list[Any]:
        return [SimpleNamespace(path=f"f{n}", chunks=c) for n, c in enumerate(chunks)]

    assert read_groups(rows(4, 4, 4, 4, 4), 10) == [["f0", "f1"], ["f2", "f3"], ["f4"]]
    # a file of a page or more is read alone (paged by the store); unknown counts (0) are
    # grouped by the number of files alone
    assert read_groups(rows(3, 12, 3, 0, 0), 10) == [["f0"], ["f1"], ["f2", "f3", "f4"]]
    assert read_groups(rows(9, 1), 10) == [["f0"], ["f1"]]  # 10 would ask a second page
    assert read_groups([], 10) == []


def test_once_the_run_has_read_its_vectors_the_store_rests_and_opens_again_when_asked(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b"):
        (docs / f"{name}.md").write_text(f"The {name} pump moves water at night. " * 60, "utf-8")
    config = ContextConstructionConfig(chunk_size=64)
    embedder = HashEmbedder(64)
    first = ingest_for_run([str(docs)], config, embedder, store_path=tmp_path / "store")
    first[1].finish()
    first[1].close()
    first[0].close()
    # the files unchanged: the run's chunks and their vectors come from the store
    store, pending, chunks = ingest_for_run(
        [str(docs)], config, embedder, store_path=tmp_path / "store"
    )
    try:
        ids = [c.id for c in chunks]
        vectors = pending.get_embeddings(ids)
        assert vectors.shape == (len(ids), 64)
        assert store._client is None  # Chroma let go (its HNSW index, its copy of the vectors)
        assert [c.id for c in store.get(ids[:3])] == ids[:3]  # opened again for a later call
        assert store._client is not None
        assert (store.get_embeddings(ids) == vectors).all()
        store.rest()
        store.rest()  # twice is once
    finally:
        pending.close()
        store.close()  # closing a resting store closes nothing more
    store.close()


def test_files_whose_chunks_the_report_counts_are_read_by_id_not_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synth._ids import chunk_id

    store = ChunkStore(HashEmbedder(64), path=tmp_path / "chroma", collection="ids_test")
    key = store.chunking.key()

    def chunk(source: str, document: str, index: int) -> Chunk:
        return Chunk(
            id=chunk_id(document, key, index),
            document_id=document,
            source=source,
            index=index,
            text=f"{source} {document} {index}",
            token_count=3,
        )

    try:
        store.add([chunk(f"f{n}.md", f"doc{n}", i) for n in range(5) for i in range(3)])
        store.add([chunk("f0.md", "old0", 0)])  # left by an interrupted ingest: not the file's
        asked: list[dict[str, Any]] = []
        get = store._collection.get
        monkeypatch.setattr(store._collection, "get", lambda **kw: (asked.append(kw), get(**kw))[1])
        rows = [
            IngestedFile(path=f"f{n}.md", status="ok", document_id=f"doc{n}", chunks=3)
            for n in range(4)
        ]
        # the report counts one chunk more than f4.md has: read by file, as is f5 (no count)
        rows.append(IngestedFile(path="f4.md", status="ok", document_id="doc4", chunks=4))
        pending = SimpleNamespace(report=IngestReport(files=rows), chunks={})
        chunks = chunks_of_run(pending, store)
    finally:
        store.close()
    assert [(c.source, c.document_id, c.index) for c in chunks] == [
        (f"f{n}.md", f"doc{n}", i) for n in range(5) for i in range(3)
    ]
    by_file = [kw for kw in asked if kw.get("where") is not None]
    assert [kw["where"] for kw in by_file] == [{"source": "f4.md"}]
    assert sum(len(kw.get("ids") or []) for kw in asked) == 12 + 4  # one read of 12, one of 4
