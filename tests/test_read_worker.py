"""A run's files read in a worker process (synth.store._worker_reads; issue 22): the same reads as
reading here, and nothing lost when the worker cannot help (a loader that does not pickle, a worker
that dies, a reader given up part way, the worker turned off). A real worker process each time;
`synth generate` run as users run it reads its files there and says so in its manifest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from synth_runs import Server, child_env

from synth.ingest import ChunkingConfig, FileStatus, register_loader, unregister_loader
from synth.store._reads import FileRead, read_here
from synth.store._worker_reads import ENV, ReadWorker

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_docs"
STORE = SimpleNamespace(chunking=ChunkingConfig(chunk_size=128, chunk_overlap=16))


def no_skip(item: object) -> FileStatus | None:
    return None


def rows(reads: list[FileRead]) -> list[tuple]:
    """What a reader gave, comparable: status, document id, and each chunk whole."""
    return [
        (r.status.model_dump(), r.document_id, [c.model_dump() for c in r.chunks]) for r in reads
    ]


@pytest.fixture
def worker():
    made = ReadWorker()
    made.start()
    assert made.available
    yield made
    made.close()


def test_the_worker_reads_what_reading_here_reads(worker: ReadWorker) -> None:
    here = list(read_here([SAMPLE], STORE, password=None, skip=no_skip))
    there = list(worker.reads([SAMPLE], STORE, password=None, skip=no_skip))
    assert rows(there) == rows(here)
    assert worker.counts["worker"] == sum(r.document_id is not None for r in here) > 10
    assert worker.counts["here"] == 0


def test_a_loader_that_does_not_pickle_is_read_here(worker: ReadWorker, tmp_path: Path) -> None:
    (tmp_path / "a.note").write_text("A note about the pump warranty. " * 20, encoding="utf-8")
    (tmp_path / "b.txt").write_text("The battery holds twelve kilowatt hours. " * 20, "utf-8")
    register_loader(".note", lambda path: path.read_text(encoding="utf-8"))
    try:
        here = list(read_here([tmp_path], STORE, password=None, skip=no_skip))
        there = list(worker.reads([tmp_path], STORE, password=None, skip=no_skip))
    finally:
        unregister_loader(".note")
    assert rows(there) == rows(here)
    assert worker.counts == {"worker": 1, "here": 1, "ahead": 0}


def test_files_after_the_worker_died_are_read_here(worker: ReadWorker) -> None:
    here = list(read_here([SAMPLE], STORE, password=None, skip=no_skip))
    reads = worker.reads([SAMPLE], STORE, password=None, skip=no_skip)
    first = next(reads)
    assert worker._process is not None
    worker._process.kill()
    worker._process.wait()
    rest = list(reads)
    assert rows([first, *rest]) == rows(here)
    assert not worker.available and worker.counts["here"] > 0


def test_a_reader_given_up_part_way_leaves_no_answer_for_the_next(worker: ReadWorker) -> None:
    here = list(read_here([SAMPLE], STORE, password=None, skip=no_skip))
    reads = worker.reads([SAMPLE], STORE, password=None, skip=no_skip)
    next(reads)
    reads.close()  # an ingest that failed: answers were still owed
    again = list(worker.reads([SAMPLE], STORE, password=None, skip=no_skip))
    assert rows(again) == rows(here)


def test_the_skip_hook_is_asked_here_and_skipped_files_never_reach_the_worker(
    worker: ReadWorker,
) -> None:
    def skip(item):  # noqa: ANN001, ANN202
        if item.suffix == ".pdf":
            return FileStatus(path=item.path, status="skipped", reason="unchanged")
        return None

    there = list(worker.reads([SAMPLE], STORE, password=None, skip=skip))
    here = list(read_here([SAMPLE], STORE, password=None, skip=skip))
    assert rows(there) == rows(here)
    assert any(r.status.reason == "unchanged" for r in there)
    assert worker.counts["worker"] == sum(r.document_id is not None for r in here)


def test_turned_off_it_never_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "0")
    made = ReadWorker()
    made.start()
    assert not made.available and made._process is None


def test_synth_generate_reads_its_files_in_the_worker(tmp_path: Path) -> None:
    """The command as users run it: its manifest's ingest row says where the files were read."""
    server = Server(tmp_path)
    try:
        done = subprocess.run(
            [
                sys.executable,
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
    manifest = json.loads(done.stdout.strip().splitlines()[-1])
    ingest = next(r for r in manifest["stages"] if r["stage"] == "ingest")
    assert ingest["notes"]["files_read_worker"] == ingest["items_out"] > 10


def test_relative_paths_are_read_from_the_callers_folder_not_the_workers(
    worker: ReadWorker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program (or a test) that changes its folder after the worker started: the worker reads
    the file the program's relative path names."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "pump.txt").write_text("The pump hums at night. " * 30, "utf-8")
    monkeypatch.chdir(tmp_path)
    there = list(worker.reads(["notes"], STORE, password=None, skip=no_skip))
    here = list(read_here(["notes"], STORE, password=None, skip=no_skip))
    assert rows(there) == rows(here) and there[0].status.status == "ok"
    assert worker.counts["worker"] == 1
