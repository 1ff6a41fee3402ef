"""Re-ingesting: unchanged files are not read again, changed ones replace their old chunks.

Every test taking ``store_factory`` runs on embedded Chroma and on a real ``chroma run`` server.
Readers are the real ones wrapped to count the files they are asked to read; hashing is counted
the same way, by wrapping the function that hashes.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import test_store_chroma
from ingest_files import make_docx, make_pdf
from test_store_chroma import CountingEmbedder, StoreFactory, make_chunk

from synth import ChunkStore, HashEmbedder, chunk_documents, ingest_documents, load_documents
from synth.errors import ModelError
from synth.ingest import ChunkingConfig, register_loader, registered_loaders, unregister_loader
from synth.ingest.docx import read_docx
from synth.ingest.pdf import read_pdf
from synth.ingest.text import read_text
from synth.store import _reingest
from synth.store._fingerprint import SETTLE_NS, is_settled, setup_key
from synth.store.ingest_run import CHUNKS_PER_WRITE, start_ingest

# the fixture of test_store_chroma: stores on each backend (its server is conftest's chroma_server)
store_factory = test_store_chroma.store_factory

CHUNKING = {"chunk_size": 48}
HOUR_NS = 3600 * 10**9


class CountingReader:
    """A real reader that records the name of every file it is asked to read."""

    def __init__(self, read: Callable[[Path], object], names: list[str]) -> None:
        self.read = read
        self.names = names
        self.on_read: Callable[[Path], None] | None = None  # e.g. change the file while reading

    def __call__(self, path: Path) -> object:
        self.names.append(Path(path).name)
        result = self.read(path)
        if self.on_read is not None:
            self.on_read(Path(path))
        return result


@pytest.fixture
def reads() -> Iterator[list[str]]:
    """The names of the files read, in order (the built-in readers, counted)."""
    names: list[str] = []
    builtin = registered_loaders()
    for suffix, read in ((".txt", read_text), (".md", read_text), (".docx", read_docx)):
        register_loader(suffix, CountingReader(read, names))
    register_loader(".pdf", CountingReader(read_pdf, names))
    yield names
    for suffix in (".txt", ".md", ".docx", ".pdf"):
        unregister_loader(suffix)
    assert registered_loaders().keys() == builtin.keys()


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files hashed to decide whether they changed."""
    names: list[str] = []
    real = _reingest.sha256_of

    def counting(path: Path) -> str:
        names.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(_reingest, "sha256_of", counting)
    return names


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Four readable files of a few chunks each (the PDF with a page without text), a broken PDF
    and an unsupported file."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.txt").write_text(
        "The harbour light turns every twelve seconds and the keeper logs each tide. " * 20
    )
    (root / "b.md").write_text("# Storms\n\n" + "Storm flags mean a gale is coming soon. " * 15)
    make_docx(
        root / "c.docx",
        [("p", "Lamp oil is ordered each spring from the mainland. " * 8), ("p", "Wicks too.")],
    )
    # its last page has no text: the note the report gives it must come back with an unread file
    pages = ["Page one tells of fog horns and rocks. " * 10, "Page two. " * 20, ""]
    make_pdf(root / "d.pdf", pages)
    (root / "broken.pdf").write_bytes(b"not a pdf")
    (root / "picture.png").write_bytes(b"\x89PNG")
    settle(root)
    return root


def settle(root: Path, age_ns: int = HOUR_NS) -> None:
    """Date every file's modification ``age_ns`` back, as files written long before an ingest."""
    when = time.time_ns() - age_ns
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(when, when))


def rows(report: object) -> list[tuple[object, ...]]:
    return [
        (f.path, f.status, f.reason, f.chunks, f.tokens, f.document_id)
        for f in report.files  # type: ignore[attr-defined]
    ]


def ok_names(report: object) -> list[str]:
    return [Path(f.path).name for f in report.files if f.status == "ok"]  # type: ignore[attr-defined]


# ---- an unchanged corpus --------------------------------------------------------------------------
def test_a_second_run_reads_chunks_and_embeds_no_unchanged_file(
    store_factory: StoreFactory, folder: Path, reads: list[str], hashed: list[str]
) -> None:
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking=CHUNKING)
    first = ingest_documents(folder, store=store)
    assert sorted(reads) == ["a.txt", "b.md", "broken.pdf", "c.docx", "d.pdf"]
    assert sorted(hashed) == sorted(reads)  # hashed before reading: the fingerprint's content hash
    assert first.embedded == first.chunks == embedder.embedded_texts > 8
    assert (first.unchanged, first.reused) == (0, 0)
    reads.clear()
    hashed.clear()

    second = ingest_documents(folder, store=store)

    assert reads == ["broken.pdf"]  # only the file that could not be read is tried again
    assert hashed == ["broken.pdf"]  # the stat of a file modified long ago settles the others
    assert embedder.embedded_texts == first.embedded  # nothing embedded
    assert rows(second) == rows(first)  # the same rows: statuses, reasons, chunks, tokens, ids
    assert [f.reason for f in second.files if f.path.endswith("d.pdf")] == [
        "1 of 3 pages have no text"
    ]
    assert (second.chunks, second.tokens) == (first.chunks, first.tokens)
    assert (second.embedded, second.reused) == (0, first.chunks)
    assert second.unchanged == 4 and second.to_json()["unchanged"] == 4
    assert [Path(f.path).name for f in second.files if f.unchanged] == ok_names(first)
    assert store.count() == first.chunks


def test_files_written_just_before_an_ingest_are_hashed_again_not_read(
    store_factory: StoreFactory, folder: Path, reads: list[str], hashed: list[str]
) -> None:
    store = store_factory(chunking=CHUNKING)
    settle(folder, age_ns=0)  # modified now: a write within the same clock tick would not show
    first = ingest_documents(folder, store=store)
    reads.clear()
    hashed.clear()
    second = ingest_documents(folder, store=store)
    assert reads == ["broken.pdf"]
    assert sorted(hashed) == ["a.txt", "b.md", "broken.pdf", "c.docx", "d.pdf"]  # not read
    assert rows(second) == rows(first) and second.embedded == 0


def test_a_touched_but_identical_file_is_hashed_once_not_read(
    store_factory: StoreFactory, folder: Path, reads: list[str], hashed: list[str]
) -> None:
    store = store_factory(chunking=CHUNKING)
    first = ingest_documents(folder, store=store)
    when = time.time_ns() - HOUR_NS // 2
    os.utime(folder / "a.txt", ns=(when, when))
    reads.clear()
    hashed.clear()
    second = ingest_documents(folder, store=store)
    assert reads == ["broken.pdf"] and hashed == ["a.txt", "broken.pdf"]
    assert rows(second) == rows(first) and second.embedded == 0
    hashed.clear()
    third = ingest_documents(folder, store=store)
    assert hashed == ["broken.pdf"]  # the new stat of a.txt was stored
    assert rows(third) == rows(first)


# ---- changed files ---------------------------------------------------------------------------------
def test_a_changed_file_is_read_again_and_its_old_chunks_removed(
    store_factory: StoreFactory, folder: Path, reads: list[str]
) -> None:
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking=CHUNKING)
    first = ingest_documents(folder, store=store)
    path = next(f.path for f in first.files if f.path.endswith("b.md"))
    old_id = next(f.document_id for f in first.files if f.path == path)
    (folder / "b.md").write_text("# Tides\n\n" + "Spring tides follow the full moon. " * 12)
    settle(folder)
    reads.clear()
    embedded_before = embedder.embedded_texts

    second = ingest_documents(folder, store=store)

    assert reads == ["b.md", "broken.pdf"]
    changed = next(f for f in second.files if f.path == path)
    assert not changed.unchanged and changed.document_id not in (None, old_id)
    assert second.embedded == changed.chunks == embedder.embedded_texts - embedded_before
    assert second.reused == second.chunks - changed.chunks
    assert second.removed == 1
    stored = store.chunks(source=path)
    assert {c.document_id for c in stored} == {changed.document_id}
    assert len(stored) == changed.chunks
    assert store.count() == second.chunks  # nothing of the old version is left
    reads.clear()
    third = ingest_documents(folder, store=store)
    assert reads == ["broken.pdf"] and rows(third) == rows(second)


def test_a_file_changed_while_it_is_read_is_read_again_next_time(
    tmp_path: Path, folder: Path, reads: list[str]
) -> None:
    reader = registered_loaders()[".txt"]
    assert isinstance(reader, CountingReader)
    reader.on_read = lambda path: path.write_text(path.read_text() + " One more line.")
    with ChunkStore(HashEmbedder(32), path=tmp_path / "db", chunking=CHUNKING) as store:
        ingest_documents(folder, store=store)
        reader.on_read = None
        settle(folder)
        reads.clear()
        second = ingest_documents(folder, store=store)
        assert reads == ["a.txt", "broken.pdf"]  # its stored fingerprint would not be true
        reads.clear()
        ingest_documents(folder, store=store)
        assert reads == ["broken.pdf"]
    assert second.removed == 1  # the version read while it changed


def test_another_chunk_size_in_the_same_collection_cuts_every_file_again(
    store_factory: StoreFactory, folder: Path, reads: list[str]
) -> None:
    first = ingest_documents(
        folder, store=store_factory(chunking={"chunk_size": 48}, collection="synth-shared")
    )
    reads.clear()
    store = store_factory(chunking={"chunk_size": 24}, collection="synth-shared")
    second = ingest_documents(folder, store=store)
    assert sorted(reads) == ["a.txt", "b.md", "broken.pdf", "c.docx", "d.pdf"]
    assert second.unchanged == 0 and second.chunks > first.chunks
    assert second.embedded == second.chunks  # new chunks, new ids
    assert store.count() == first.chunks + second.chunks  # same documents: both cuts are kept
    reads.clear()
    assert ingest_documents(folder, store=store).unchanged == 4 and reads == ["broken.pdf"]


def test_a_deleted_file_leaves_the_report_and_the_others_are_not_read(
    store_factory: StoreFactory, folder: Path, reads: list[str]
) -> None:
    store = store_factory(chunking=CHUNKING)
    first = ingest_documents(folder, store=store)
    gone = next(f for f in first.files if f.path.endswith("c.docx"))
    (folder / "c.docx").unlink()
    reads.clear()
    second = ingest_documents(folder, store=store)
    assert reads == ["broken.pdf"]
    assert gone.path not in {f.path for f in second.files}
    assert second.chunks == second.reused == first.chunks - gone.chunks
    assert (second.embedded, second.unchanged) == (0, 3)
    # the store is shared by every folder ingested into it: a file missing here is not pruned
    assert len(store.chunks(source=gone.path)) == gone.chunks


# ---- stores written before fingerprints ------------------------------------------------------------
def test_a_store_without_fingerprints_is_read_once_and_embeds_nothing(
    store_factory: StoreFactory, folder: Path, reads: list[str]
) -> None:
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking=CHUNKING)
    first = ingest_documents(folder, store=store)
    _forget_fingerprints(store)
    (folder / "a.txt").write_text("A new text about gulls and terns on the outer rocks. " * 9)
    settle(folder)
    reads.clear()
    texts = embedder.embedded_texts
    second = ingest_documents(folder, store=store)
    assert sorted(reads) == ["a.txt", "b.md", "broken.pdf", "c.docx", "d.pdf"]
    changed = next(f for f in second.files if f.path.endswith("a.txt"))
    assert second.embedded == changed.chunks == embedder.embedded_texts - texts
    assert second.removed == 1 and store.count() == second.chunks < first.chunks + changed.chunks
    reads.clear()
    assert ingest_documents(folder, store=store).unchanged == 4 and reads == ["broken.pdf"]


def _forget_fingerprints(store: ChunkStore) -> None:
    """Strip the fingerprints, as in a store written by an earlier synth."""
    from synth.store import _fingerprint

    keys = [getattr(_fingerprint, name) for name in ("STAT", "SHA256", "SETUP", "SETTLED")]
    keys += [_fingerprint.CHUNKS, _fingerprint.TOKENS, _fingerprint.NOTE]
    heads = [chunk_id for chunk_id, _ in store.first_chunks()]
    store._collection.update(ids=heads, metadatas=[dict.fromkeys(keys) for _ in heads])
    assert all(_fingerprint.SHA256 not in meta for _, meta in store.first_chunks())


# ---- the store calls behind it -----------------------------------------------------------------------
def test_marks_are_stored_with_new_chunks_and_merged_into_stored_ones(
    store_factory: StoreFactory,
) -> None:
    store = store_factory()
    store.add([make_chunk(0), make_chunk(1)])
    result = store.add(
        [make_chunk(i) for i in range(3)],
        marks={make_chunk(0).id: {"file_note": "old"}, make_chunk(2).id: {"file_note": "new"}},
    )
    assert (result.embedded, result.reused) == (1, 2)
    notes = {chunk_id: meta.get("file_note") for chunk_id, meta in store.first_chunks()}
    assert notes == {make_chunk(0).id: "old"}  # first_chunks: index 0 only
    (got,) = store._collection.get(ids=[make_chunk(2).id], include=["metadatas"])["metadatas"]
    assert got["file_note"] == "new" and got["source"] == "a.txt"
    assert store.get([make_chunk(0).id]) == [make_chunk(0)]  # marks are not chunk metadata
    store.delete_documents([make_chunk(0).document_id])
    assert store.count() == 0


def test_a_failure_while_storing_stops_the_run_and_its_thread(tmp_path: Path) -> None:
    class Failing(HashEmbedder):
        holds_gil = False  # embedded by the background writer

        def __init__(self) -> None:
            super().__init__(32, batch_size=64)
            self.batches = 0

        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            self.batches += 1
            if self.batches == 2:
                raise ModelError("the embedding service is down")
            return super()._embed_batch(texts)

    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(40):
        (folder / f"{n:02}.txt").write_text(f"Note {n} on buoys, bells and beacons. " * 12)
    before = {t.name for t in threading.enumerate()}
    embedder = Failing()
    with ChunkStore(embedder, path=tmp_path / "db", chunking={"chunk_size": 16}) as store:
        with pytest.raises(ModelError, match="service is down"):
            ingest_documents(folder, store=store)
        assert embedder.batches == 2  # nothing was sent after the failure
    assert {t.name for t in threading.enumerate()} == before


def test_the_settle_window_is_a_few_seconds(tmp_path: Path) -> None:
    assert 1 <= SETTLE_NS / 10**9 <= 10
    path = tmp_path / "a.txt"
    path.write_text("x")
    info = os.stat(path)
    assert not is_settled(info, info.st_mtime_ns + SETTLE_NS)  # the window's end is still in it
    assert is_settled(info, info.st_mtime_ns + SETTLE_NS + 1)


def _reader_a(path: Path) -> object:
    return read_text(path)


def _reader_b(path: Path) -> object:
    return read_text(path)


def test_a_files_setup_names_its_reader_and_a_partial_by_the_reader_it_wraps() -> None:
    """Another reader for a suffix makes its files read again; the PDF reader given a password
    (a partial) reads the same chunks as without one."""
    chunking, embedder = ChunkingConfig(**CHUNKING), HashEmbedder(32)

    def setup(loader: Any) -> str:
        return setup_key(chunking, embedder, loader)

    assert setup(functools.partial(read_pdf, password="pw")) == setup(read_pdf)
    assert len({setup(read_pdf), setup(read_text), setup(_reader_a), setup(_reader_b)}) == 4
    assert setup(CountingReader(read_text, [])) != setup(read_text)  # an object: by its class
    assert setup(CountingReader(read_text, [])) != setup(_OtherReader(read_text, []))

    def read_text_here(path: Path) -> object:  # a reader of the same name in another module
        return read_text(path)

    read_text_here.__qualname__ = read_text.__qualname__
    assert setup(read_text_here) != setup(read_text)


class _OtherReader(CountingReader):
    """Another class of reader."""


def test_the_ingest_table_says_which_files_were_not_read_again(
    tmp_path: Path, folder: Path
) -> None:
    import io

    from rich.console import Console

    from synth.cli._ingest_view import UNCHANGED_NOTE, print_ingest_report, summary_line

    with ChunkStore(HashEmbedder(32), path=tmp_path / "db", chunking=CHUNKING) as store:
        first = ingest_documents(folder, store=store)
        second = ingest_documents(folder, store=store)
    out = io.StringIO()
    print_ingest_report(second, Console(file=out, width=200, force_terminal=False))
    lines = out.getvalue().splitlines()
    for row in second.files:
        line = next(line for line in lines if row.path in line)
        assert (UNCHANGED_NOTE in line) == (row.status == "ok")
    # the totals read as on the first run, with the chunks counted as reused
    assert summary_line(second) == summary_line(first).replace(
        f"{first.embedded:,} embedded now, 0 reused", f"0 embedded now, {first.chunks:,} reused"
    )
    assert summary_line(second) in lines


# ---- an ingest whose writes run on while the caller starts ------------------------------------------
def test_started_ingest_hands_over_the_chunks_and_stores_them_once_finished(
    store_factory: StoreFactory, folder: Path
) -> None:
    """``start_ingest(keep_chunks=True, hold_writes=True)`` returns when every file is chunked, with
    those chunks (none embedded or stored yet); the store holds them, exactly as handed over, once
    ``finish`` returns (called from any thread)."""
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking=CHUNKING)
    pending = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
    report = pending.report
    assert sorted(Path(p).name for p in pending.chunks) == ["a.txt", "b.md", "c.docx", "d.pdf"]
    assert report.chunks == sum(len(c) for c in pending.chunks.values()) > 4
    finished: list[object] = []
    waiters = [threading.Thread(target=lambda: finished.append(pending.finish())) for _ in range(3)]
    for waiter in waiters:
        waiter.start()
    for waiter in waiters:
        waiter.join()
    assert finished == [report] * 3 and report.embedded == report.chunks
    assert embedder.embedded_texts == report.chunks  # embedded once, though finished thrice
    stored = {chunk.id: chunk for chunk in store.chunks()}
    handed = [chunk for chunks in pending.chunks.values() for chunk in chunks]
    assert [stored[chunk.id] for chunk in handed] == handed
    # the same files again: nothing read, the chunks come from the store
    again = start_ingest([folder], store, keep_chunks=True)
    assert again.chunks == {} and again.finish().reused == report.chunks


def test_a_started_ingest_into_a_new_store_gives_the_vectors_before_storing_them(
    store_factory: StoreFactory, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into an empty store, every held batch is embedded before the first is stored, and
    ``get_embeddings`` answers from those vectors while Chroma is still storing them: exactly the
    vectors the store holds once ``finish`` returns, in the order asked."""
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking=CHUNKING)
    release = threading.Event()
    commit = store.commit

    def held_commit(*args: object, **kwargs: object) -> object:
        # a get_embeddings that waited for the store would wait here: the write then fails
        if not release.wait(timeout=20):
            raise AssertionError("the vectors were not handed over before the store had them")
        return commit(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "commit", held_commit)
    pending = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
    handed = [chunk for chunks in pending.chunks.values() for chunk in chunks]
    ids = [chunk.id for chunk in reversed(handed)]  # any order: rows come in the order asked
    vectors = pending.get_embeddings(ids)
    assert store.count() == 0  # nothing stored yet
    assert embedder.embedded_texts == len(handed)  # every batch embedded, the first not stored
    release.set()
    pending.finish()
    assert vectors.dtype == np.float32 and vectors.shape == (len(ids), embedder.dimension)
    # the store's own copy: Chroma normalises what it stores again, which moves a few last bits
    assert np.allclose(vectors, store.get_embeddings(ids), rtol=0, atol=1e-6)
    assert embedder.embedded_texts == len(handed)  # nothing embedded twice


def test_a_started_ingest_into_a_store_in_use_gives_the_stored_vectors(
    store_factory: StoreFactory, folder: Path
) -> None:
    """Into a store that holds chunks already (an unchanged file's, and a changed file's earlier
    version, which goes first), the vectors come from the store once every chunk is in: those of
    the chunks read now and of those reused, the earlier version's gone."""
    store = store_factory(CountingEmbedder(), chunking=CHUNKING)
    ingest_documents([folder], store=store)
    before = set(store.ids())
    reused = [chunk.id for chunk in store.chunks() if Path(chunk.source).name == "b.md"]
    (folder / "a.txt").write_text("Tides, moorings and the harbour master's log. " * 20)
    settle(folder)
    pending = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
    assert [Path(path).name for path in pending.chunks] == ["a.txt"]  # the others unchanged
    read_now = [chunk.id for chunks in pending.chunks.values() for chunk in chunks]
    ids = read_now + reused
    vectors = pending.get_embeddings(ids)
    assert np.array_equal(vectors, store.get_embeddings(ids))  # the store's copy, bit for bit
    assert set(read_now).isdisjoint(before) and set(store.ids()) >= set(ids)
    assert pending.finish().embedded == len(read_now)


def test_a_store_write_failing_after_the_vectors_were_handed_over_is_raised(
    store_factory: StoreFactory, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The vectors are handed over before the store has them; a write failing after that is
    raised by ``raise_if_failed`` (which never waits) and by ``finish``."""
    store = store_factory(CountingEmbedder(), chunking=CHUNKING)
    failed = threading.Event()

    def failing_commit(*args: object, **kwargs: object) -> object:
        failed.set()
        raise OSError("disk full")

    monkeypatch.setattr(store, "commit", failing_commit)
    pending = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
    pending.raise_if_failed()  # nothing failed yet, or the failure is raised: never a wait
    ids = [chunk.id for chunks in pending.chunks.values() for chunk in chunks]
    assert len(pending.get_embeddings(ids)) == len(ids)
    with pytest.raises(OSError, match="disk full"):
        pending.finish()
    assert failed.is_set()
    with pytest.raises(OSError, match="disk full"):
        pending.raise_if_failed()


def test_a_started_ingest_that_fails_to_store_says_so_at_finish(tmp_path: Path) -> None:
    class Failing(HashEmbedder):
        def _embed_batch(self, texts: list[str]) -> np.ndarray:
            raise ModelError("the embedding service is down")

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("Buoys, bells and beacons. " * 30)
    before = {t.name for t in threading.enumerate()}
    with ChunkStore(Failing(32), path=tmp_path / "db", chunking={"chunk_size": 16}) as store:
        pending = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
        assert pending.report.chunks > 0  # read and chunked: storing fails later, in the writer
        with pytest.raises(ModelError, match="service is down"):
            pending.finish()
        pending.close()  # after finish: nothing left to stop
        closed = start_ingest([folder], store, keep_chunks=True, hold_writes=True)
        closed.close()  # a caller that failed: the waiting writes are dropped, nothing raised
        assert store.count() == 0
    assert {t.name for t in threading.enumerate()} == before


# ---- a file of many writes --------------------------------------------------------------------------
def test_a_file_of_many_writes_is_stored_whole_and_found_unchanged(
    store_factory: StoreFactory, tmp_path: Path
) -> None:
    """A file's chunks go to the store a write at a time as they are cut; the first ones, with the
    file's fingerprint, last: all are stored, once, and the next run finds the file unchanged."""
    root = tmp_path / "big"
    root.mkdir()
    text = "\n\n".join(f"Paragraph {i}: the tide turns at the harbour wall." for i in range(1500))
    (root / "long.txt").write_text(text)
    settle(root)
    embedder = CountingEmbedder()
    store = store_factory(embedder, chunking={"chunk_size": 16})
    expected = chunk_documents(load_documents(root).documents, store.chunking)
    assert len(expected) > 2 * CHUNKS_PER_WRITE  # the file spans several writes

    first = ingest_documents(root, store=store)

    assert first.chunks == first.embedded == len(expected) == store.count()
    stored = sorted(store.chunks(), key=lambda chunk: chunk.index)
    assert [(c.id, c.text) for c in stored] == [(c.id, c.text) for c in expected]
    second = ingest_documents(root, store=store)
    assert (second.unchanged, second.embedded, second.reused) == (1, 0, len(expected))
