"""Ctrl-C at every moment of a real ``synth generate``, on a machine whose cores are all busy.

Two busy-loop processes (started and always ended by ``busy_loops``) keep both cores of a small CI
machine busy from the run's start until it has stopped, as six parallel ``make test`` runs did when
Ctrl-C was seen ignored for 60 s (the rerun that checks the resume runs without them). SIGINT
is sent at a moment the run's own progress marks (never after a sleep): while it is still
starting, while it ingests, while requests hang at the server, while answers arrive, while it
writes the output. Each time the process must be gone within STOP_DEADLINE seconds with exit 130
and no traceback, and the same command run again must repeat no request that had completed.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from synth_runs import (
    Server,
    check_only_lost_answers_were_repeated,
    command,
    finish_here,
    interrupt,
    read_manifest,
    recorded,
    servers,
    started,
    wait_for,
)

from synth.dataset import Dataset

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)"),
]

GOLDENS = 8
BUSY_LOOPS = 2


@contextlib.contextmanager
def busy_loops() -> Iterator[list[subprocess.Popen]]:
    """Two processes spinning on a core each until the block ends (however it ends)."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BUSY_LOOPS)
    ]
    try:
        yield loops
    finally:
        for loop in loops:
            loop.kill()
        for loop in loops:
            loop.wait()


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    with servers(tmp_path) as start:
        yield start


def big_corpus(folder: Path, files: int = 100, words: int = 1500) -> Path:
    """Text files enough for ingest to take a while (over 2 s alone, from the manifest's writing to
    its inputs, 2 s of it whatever the corpus), so Ctrl-C can land inside it. More files only make
    the rerun, which reads them all, longer: 400 made it 6 s longer."""
    rng = random.Random(11)
    vocabulary = [f"{a}{b}" for a in ("sol", "grid", "cell", "volt", "peak") for b in range(60)]
    folder.mkdir()
    for n in range(files):
        text = " ".join(rng.choice(vocabulary) for _ in range(words))
        (folder / f"note_{n:04d}.txt").write_text(f"Note {n}.\n\n{text}.\n")
    return folder


def maps_numpy(pid: int) -> bool:
    """Whether the process has loaded numpy: it is importing synth's dependencies."""
    try:
        return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def check_stopped(run: subprocess.Popen, stderr: str, work: Path, *, started_run: bool) -> dict:
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert not (work / "out.jsonl").exists()
    manifest = read_manifest(work)
    if not started_run:
        assert manifest is None
        return {}
    assert manifest is not None
    assert manifest["status"] == "interrupted", stderr
    assert "run the same command again to resume" in stderr
    return manifest


def check_rerun(server: Server, work: Path, cmd: list[str]) -> None:
    rerun = finish_here(cmd, work)
    assert rerun.returncode == 0, rerun.stderr
    assert len(Dataset.load(work / "out.jsonl")) == GOLDENS


def test_ctrl_c_while_starting(tmp_path: Path, server_factory: Callable[..., Server]) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, goldens=GOLDENS)
    with busy_loops(), started(cmd, work) as run:
        wait_for(lambda: maps_numpy(run.pid), run, "the run imported numpy")
        stderr = interrupt(run)
    check_stopped(run, stderr, work, started_run=False)
    assert "synth: interrupted" in stderr
    assert server.chat(outcome=None) == []
    check_rerun(server, work, cmd)


def test_ctrl_c_while_ingesting(tmp_path: Path, server_factory: Callable[..., Server]) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, goldens=GOLDENS, docs=big_corpus(tmp_path / "docs"))
    with busy_loops(), started(cmd, work) as run:

        def ingesting() -> bool:  # the run is open, its inputs not yet read: stage 1 runs
            manifest = read_manifest(work)
            return manifest is not None and "inputs" not in manifest

        wait_for(ingesting, run, "the run began to ingest")
        stderr = interrupt(run)
    manifest = check_stopped(run, stderr, work, started_run=True)
    assert "inputs" not in manifest  # it stopped inside stage 1
    assert server.chat(outcome=None) == []
    check_rerun(server, work, cmd)


def test_ctrl_c_while_requests_hang_at_the_server(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    release = tmp_path / "release-the-gate"
    gate = 10
    server = server_factory(SYNTH_REPLIES_GATE=str(gate), SYNTH_REPLIES_RELEASE=str(release))
    work = tmp_path / "work"
    work.mkdir()
    cache = work / ".synth" / "cache.sqlite"
    cmd = command(server, goldens=GOLDENS)
    with busy_loops(), started(cmd, work) as run:

        def answered_and_recorded() -> bool:
            return len(server.chat()) >= gate and recorded(cache) >= gate

        wait_for(answered_and_recorded, run, f"{gate} answers were recorded")
        stderr = interrupt(run)
    check_stopped(run, stderr, work, started_run=True)
    completed = server.answered()
    release.touch()
    check_rerun(server, work, cmd)
    assert server.repeated(completed) == []


def test_ctrl_c_while_answers_arrive(tmp_path: Path, server_factory: Callable[..., Server]) -> None:
    server = server_factory(latency=0.0)
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, "--max-concurrent", "4", goldens=GOLDENS)
    with busy_loops(), started(cmd, work) as run:

        def some_inputs_written() -> bool:
            found = list((work / ".synth" / "runs").glob("*/inputs.jsonl"))
            return bool(found) and len(found[0].read_text().splitlines()) >= 2

        wait_for(some_inputs_written, run, "two contexts had inputs")
        stderr = interrupt(run)
        dead_at = time.monotonic()
    check_stopped(run, stderr, work, started_run=True)
    stored = recorded(work / ".synth" / "cache.sqlite")
    check_rerun(server, work, cmd)
    check_only_lost_answers_were_repeated(server, dead_at, stored, 4)


def test_ctrl_c_while_writing_the_output(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    cmd = command(server, goldens=GOLDENS)
    with busy_loops(), started(cmd, work) as run:
        # the output is written through a temporary file next to it, named after the process: a
        # pipe there (with no reader) holds the write open until Ctrl-C comes
        os.mkfifo(work / f".out.jsonl.{run.pid}.tmp")

        def finished() -> bool:
            manifest = read_manifest(work)
            return manifest is not None and manifest["status"] == "complete"

        wait_for(finished, run, "the run finished its requests")
        stderr = interrupt(run)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert not (work / "out.jsonl").exists()
    made = len(server.chat())
    check_rerun(server, work, cmd)
    assert len(server.chat()) == made  # the rerun returned the finished run's goldens


def test_the_busy_loops_run_during_the_block_and_are_gone_after_it() -> None:
    """The loops' own check: they run inside the block (so the runs above start and stop under
    load), and none is left once the block is over."""

    def spinning() -> list[Path]:
        me = os.getpid()
        return [
            p
            for p in Path("/proc").iterdir()
            if p.name.isdigit() and _parent(p) == me and "while True" in _cmdline(p)
        ]

    with busy_loops() as loops:
        assert len(spinning()) == BUSY_LOOPS
    assert all(loop.returncode is not None for loop in loops)
    assert spinning() == []


def _parent(proc: Path) -> int:
    try:
        stat = (proc / "stat").read_text()
    except OSError:
        return -1
    return int(stat.rsplit(")", 1)[1].split()[1])


def _cmdline(proc: Path) -> str:
    try:
        return (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""
