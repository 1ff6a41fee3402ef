"""A new store's chunks stored by a worker process (synth.store._worker_writes; issue 22): the same
store as writing here, nothing lost when the worker cannot help (dead, turned off, busy), a failed
write failing as it would here, and any other use of the store opening it here after the worker's
writes are on disk. Real worker processes and real embedded Chroma stores; `synth generate` run as
users run it never imports chromadb and leaves the store whole."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import chromadb
import pytest
from synth_runs import Server, child_env

import synth.store._handle as handle_module
from synth.data import Chunk
from synth.errors import StoreError
from synth.store import ChunkStore
from synth.store._worker_writes import ENV, WriteWorker
from synth.store.ingest_run import ingest_documents

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_docs"


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[WriteWorker]:
    """A started worker, the one new stores ask for their adds."""
    made = WriteWorker()
    made.start()
    assert made.available
    monkeypatch.setattr(handle_module, "WRITE_WORKER", made)
    yield made
    made.close()


def stored(path: Path) -> dict[str, tuple]:
    """Everything one store's only collection holds, by id, read with chromadb itself."""
    client = chromadb.PersistentClient(path=str(path))
    (collection,) = client.list_collections()
    got = collection.get(include=["documents", "metadatas", "embeddings"])
    return {
        i: (doc, meta, [round(float(x), 6) for x in vector])
        for i, doc, meta, vector in zip(
            got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True
        )
    }


def chunks(n: int, start: int = 0) -> list[Chunk]:
    return [
        Chunk(
            id=f"c{i}",
            document_id="d",
            source="notes.txt",
            index=i,
            text=f"Note {i}: the heat pump's filter is cleaned every {i + 2} months.",
            token_count=14,
        )
        for i in range(start, start + n)
    ]


def test_the_worker_stores_what_storing_here_stores(worker: WriteWorker, tmp_path: Path) -> None:
    with ChunkStore("hash", path=tmp_path / "here") as here:
        ingest_documents([SAMPLE], store=here)
    with ChunkStore("hash", path=tmp_path / "there", open_later=True) as there:
        report = ingest_documents([SAMPLE], store=there)
    assert worker.adds >= 1 and report.embedded > 10
    assert stored(tmp_path / "there") == stored(tmp_path / "here")


def test_a_store_that_exists_is_written_here(worker: WriteWorker, tmp_path: Path) -> None:
    with ChunkStore("hash", path=tmp_path / "s") as first:
        first.add(chunks(3))
    with ChunkStore("hash", path=tmp_path / "s", open_later=True) as again:
        again.add(chunks(3, start=3))
        assert again.count() == 6
    assert worker.adds == 0


def test_any_other_use_opens_the_store_here_after_the_workers_writes(
    worker: WriteWorker, tmp_path: Path
) -> None:
    store = ChunkStore("hash", path=tmp_path / "s", open_later=True)
    try:
        store.add(chunks(4))
        assert worker.adds == 1 and not store._handle.unopened_new
        assert store.count() == 4  # the worker closed its collection, then it opened here
        store.add(chunks(2, start=4))  # here now
        assert worker.adds == 1 and store.count() == 6
    finally:
        store.close()
    # free again: the next new store's adds go to it
    with ChunkStore("hash", path=tmp_path / "t", open_later=True) as other:
        other.add(chunks(1))
    assert worker.adds == 2


def test_adds_after_the_worker_died_are_stored_here(worker: WriteWorker, tmp_path: Path) -> None:
    with ChunkStore("hash", path=tmp_path / "s", open_later=True) as store:
        store.add(chunks(3))
        assert worker._process is not None
        worker._process.kill()
        worker._process.wait()
        store.add(chunks(3, start=3))
        assert not worker.available and worker.adds == 1
    assert sorted(stored(tmp_path / "s")) == sorted(c.id for c in chunks(6))


def test_a_write_the_worker_refuses_fails_as_it_would_here(
    worker: WriteWorker, tmp_path: Path
) -> None:
    with ChunkStore("hash", path=tmp_path / "s", open_later=True) as store:
        store.add(chunks(2))
        wrong = store.prepare(chunks(1, start=2))
        wrong = wrong._replace(vectors=wrong.vectors[:, :8])  # not the stored vectors' size
        with pytest.raises(StoreError, match="cannot add chunks"):
            store.commit(wrong)
        assert worker.available  # the worker said no; it did not die


def test_one_store_at_a_time_holds_the_worker(worker: WriteWorker, tmp_path: Path) -> None:
    with ChunkStore("hash", path=tmp_path / "a", open_later=True) as a:
        a.add(chunks(1))
        with ChunkStore("hash", path=tmp_path / "b", open_later=True) as b:
            b.add(chunks(2))  # the worker holds a's collection: b is written here
    assert worker.adds == 1
    assert len(stored(tmp_path / "a")) == 1 and len(stored(tmp_path / "b")) == 2


def test_turned_off_it_never_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "0")
    made = WriteWorker()
    made.start()
    assert not made.available and made._process is None


def test_synth_generate_never_imports_chromadb_into_a_new_store(tmp_path: Path) -> None:
    """The command as users run it (every import listed by -X importtime): chromadb is imported
    by the worker only, and the store it leaves holds every chunk of the run."""
    server = Server(tmp_path)
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "synth",
                "generate",
                str(SAMPLE),
                "--goldens",
                "4",
                "--embedder",
                "hash",
                "--base-url",
                server.url,
                "--json",
                "-o",
                "goldens.jsonl",
            ],  # fmt: skip
            cwd=tmp_path,
            env=child_env(OPENAI_API_KEY="sk-test"),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "synth.store._worker_writes" in imported
    assert not [name for name in imported if name.split(".")[0] == "chromadb"]
    manifest = json.loads(done.stdout.strip().splitlines()[-1])
    chunks_of_run = manifest["inputs"]["chunks"]
    assert len(stored(tmp_path / ".synth" / "chroma")) == chunks_of_run > 10


def test_a_relative_store_path_is_the_callers_not_the_workers(
    worker: WriteWorker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program (or a test) that changes its folder after the worker started: the store is
    written where the program's relative path names it."""
    monkeypatch.chdir(tmp_path)
    with ChunkStore("hash", path=Path("rel") / "store", open_later=True) as store:
        store.add(chunks(2))
        assert worker.adds == 1 and store.count() == 2
    assert len(stored(tmp_path / "rel" / "store")) == 2
