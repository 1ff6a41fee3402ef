"""Files read ahead by the read worker (synth.ingest._worker, issue 22): what it read ahead is
answered only for the same file, display path, loader and chunking, unchanged since; it stops at a
request and at AHEAD_FILES; what a file's reading logged is said when the file is asked for. The
worker's logic driven here, in this process; a real worker process reads ahead and answers as
reading here does."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

import synth.ingest._worker as worker_module
from synth.ingest import (
    ChunkingConfig,
    FileToLoad,
    iter_files,
    read_chunked,
    register_loader,
    unregister_loader,
)
from synth.store._reads import read_here
from synth.store._worker_reads import ReadWorker

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "sample_docs"
CHUNKING = ChunkingConfig(chunk_size=128, chunk_overlap=16)


class Line:
    """A connection with a request waiting after ``quiet`` polls."""

    def __init__(self, quiet: int = 10**9) -> None:
        self.quiet = quiet

    def poll(self) -> bool:
        self.quiet -= 1
        return self.quiet < 0


def rows(reads: list) -> list[tuple]:
    """What a reader gave, comparable: status, document id, and each chunk whole."""
    return [
        (r.status.model_dump(), r.document_id, [c.model_dump() for c in r.chunks]) for r in reads
    ]


def to_load(paths: list[Path]) -> list[FileToLoad]:
    found = [i for i in iter_files(paths) if isinstance(i, FileToLoad)]
    return [i._replace(file=i.file.absolute()) for i in found]


def fill(paths: list[Path], line: Line | None = None) -> worker_module._Ahead:
    ahead = worker_module._Ahead()
    ahead.fill(("ahead", os.getcwd(), [str(p) for p in paths], CHUNKING), line or Line())
    return ahead


def test_what_was_read_ahead_is_what_reading_now_gives() -> None:
    ahead = fill([SAMPLE])
    items = to_load([SAMPLE])
    assert len(ahead.read) == len(items) > 10
    for item in items:
        assert ahead.take(item, CHUNKING) == ("ahead", *read_chunked(item, CHUNKING))
    assert ahead.read == {}


def test_a_file_changed_since_or_asked_otherwise_is_read_again(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text(f"The {name} pump runs quietly. " * 30, "utf-8")
    ahead = fill([tmp_path])
    a, b, c = to_load([tmp_path])
    (tmp_path / "a.txt").write_text("Changed: the pump was replaced. " * 40, "utf-8")
    assert ahead.take(a, CHUNKING) is None
    assert ahead.take(b, ChunkingConfig(chunk_size=64, chunk_overlap=8)) is None
    assert ahead.take(c._replace(path="elsewhere/c.txt"), CHUNKING) is None
    assert ahead.take(c, CHUNKING) is not None


def test_it_stops_at_a_request_and_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fill([SAMPLE], Line(quiet=0)).read == {}
    assert len(fill([SAMPLE], Line(quiet=3)).read) == 3
    monkeypatch.setattr(worker_module, "AHEAD_FILES", 2)
    assert len(fill([SAMPLE]).read) == 2


def test_what_a_file_logged_is_said_when_it_is_asked_for(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def noisy(path: Path) -> str:
        logging.getLogger("synth.test_reader").warning("odd bytes in %s", path.name)
        return path.read_text(encoding="utf-8")

    (tmp_path / "pump.note").write_text("The pump hums at night. " * 30, "utf-8")
    register_loader(".note", noisy)
    try:
        with caplog.at_level(logging.WARNING):
            ahead = fill([tmp_path])
            assert "odd bytes" not in caplog.text
            (item,) = to_load([tmp_path])
            assert ahead.take(item, CHUNKING) is not None
            assert "odd bytes in pump.note" in caplog.text
    finally:
        unregister_loader(".note")


def test_a_worker_reading_ahead_answers_as_reading_here() -> None:
    worker = ReadWorker()
    worker.start()
    try:
        worker.read_ahead([SAMPLE], CHUNKING)
        store = SimpleNamespace(chunking=CHUNKING)
        there = list(worker.reads([SAMPLE], store, password=None, skip=lambda item: None))
    finally:
        worker.close()
    here = list(read_here([SAMPLE], store, password=None, skip=lambda item: None))
    assert rows(there) == rows(here)
    assert worker.counts["worker"] == len(here) and worker.counts["ahead"] <= len(here)
