"""Runs side by side, and the output checked before anything is paid for.

- Processes that open one new embedded store at the same moment all succeed (Chroma makes its
  tables on the first opening; two doing it at once failed with "table collections already
  exists").
- Two first runs in one new folder both deliver.
- A second run that would write the output a running one writes is refused at once, naming it.
- An output that cannot be written is one line and exit 2 before the first request.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import fake_openai
import pytest
import synth_replies
from synth_runs import (
    PATIENCE,
    Server,
    child_env,
    command,
    end_process,
    finish_here,
    recorded,
    servers,
    started,
    wait_for,
)

from synth.cli import main
from synth.dataset import Dataset
from synth.errors import ConfigError
from synth.run.output import claim_output, lock_path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = str(REPO / "sample_docs")

# ---- two processes opening one new store -----------------------------------------------------------

OPENER = textwrap.dedent(
    """
    import sys
    from synth.errors import StoreError
    from synth.store import ChunkStore

    print("ready", flush=True)
    for line in sys.stdin:  # each round starts together: the test answers every process at once
        try:
            with ChunkStore("hash", path=line.strip()) as store:
                store.count()
        except StoreError as exc:
            print(f"synth: error: {exc}", flush=True)
            continue
        print("opened", flush=True)
    """
)

OPENERS = 4
ROUNDS = 16


def _answer(proc: subprocess.Popen) -> str:
    """The opener's next line, waiting at most PATIENCE for it (it writes one a round)."""
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], PATIENCE)
    assert readable, f"an opener gave no answer in {PATIENCE:.0f} s"
    return proc.stdout.readline().strip()


@pytest.mark.slow
def test_processes_opening_one_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    # the same processes race in every round (each round a new store), so chromadb is imported
    # OPENERS times rather than OPENERS x ROUNDS
    failures: list[str] = []
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(),
        )
        for _ in range(OPENERS)
    ]
    try:
        for proc in procs:  # each has imported chromadb: opening is all that is left
            assert _answer(proc) == "ready"
        for n in range(ROUNDS):
            for proc in procs:
                assert proc.stdin is not None
                proc.stdin.write(f"{tmp_path / f'store{n}'}\n")
                proc.stdin.flush()
            for proc in procs:
                out = _answer(proc)
                if out != "opened":
                    failures.append(f"round {n}: {out}")
            if failures:
                break
        for proc in procs:
            proc.communicate(timeout=PATIENCE)  # stdin closed: the loop ends
            assert proc.returncode == 0 or failures
    finally:
        for proc in procs:
            end_process(proc)
    assert failures == []


# ---- runs side by side ---------------------------------------------------------------------------


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    with servers(tmp_path) as start:
        yield start


@pytest.mark.slow
def test_two_first_runs_in_one_new_folder_both_deliver(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    first = command(server, "--seed", "1", "-o", "first.jsonl", goldens=4)
    second = command(server, "--seed", "2", "-o", "second.jsonl", goldens=4)
    with started(first, work) as one, started(second, work) as two:
        _, err_one = one.communicate(timeout=PATIENCE)
        _, err_two = two.communicate(timeout=PATIENCE)
    assert one.returncode == 0, err_one
    assert two.returncode == 0, err_two
    assert len(Dataset.load(work / "first.jsonl")) == 4
    assert len(Dataset.load(work / "second.jsonl")) == 4


@pytest.mark.slow
def test_a_second_run_writing_the_same_output_is_refused_naming_the_first(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    release = tmp_path / "release-the-gate"
    gate = 4
    server = server_factory(SYNTH_REPLIES_GATE=str(gate), SYNTH_REPLIES_RELEASE=str(release))
    work = tmp_path / "work"
    work.mkdir()
    cache = work / ".synth" / "cache.sqlite"
    with started(command(server, goldens=4), work) as first:
        # the first run is under way, its later requests held by the server
        wait_for(lambda: recorded(cache) >= gate, first, f"{gate} answers were recorded")
        asked = len(server.chat(outcome=None))
        second = finish_here(command(server, "--seed", "9", goldens=4), work)
        assert second.returncode == 2
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert lines[0].startswith("synth: error: cannot write out.jsonl: another synth run")
        assert f"(process {first.pid}, started " in lines[0]
        assert "choose another -o" in lines[0]
        assert len(server.chat(outcome=None)) == asked  # the second asked nothing
        release.touch()
        _, stderr = first.communicate(timeout=PATIENCE)
    assert first.returncode == 0, stderr
    assert Dataset.load(work / "out.jsonl").metadata["seed"] == 5  # the first run's
    assert not lock_path(work / "out.jsonl").exists()  # released once written


def test_a_claim_is_refused_while_held_and_free_once_released(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    with claim_output(output) as claim:
        assert claim.held and lock_path(output).exists()
        with pytest.raises(ConfigError, match=rf"another synth run \(process {os.getpid()}, "):
            claim_output(output)
    assert not lock_path(output).exists()
    with claim_output(output) as again:  # free again
        assert again.held


def test_a_stale_lock_file_left_by_a_killed_run_does_not_block(tmp_path: Path) -> None:
    output = tmp_path / "goldens.jsonl"
    lock_path(output).write_text("999999 2000-01-01 00:00:00\n")  # nobody holds a lock on it
    with claim_output(output) as claim:
        assert claim.held


# ---- the output checked before the first request ---------------------------------------------------


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[fake_openai.FakeOpenAI]:
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-lifecycle-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def refused(output: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["generate", SAMPLE, "--goldens", "2", "--embedder", "hash", "-o", output])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "Errno" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"synth: error: cannot write {output}"), err
    return lines[0]


def unwritable_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder this user cannot create files in (root may write anywhere a mode allows: /proc)."""
    if os.geteuid() == 0:
        yield Path("/proc")
        return
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    yield from unwritable_folder(tmp_path)


def test_an_unwritable_folder_is_one_line_before_any_request(
    server: fake_openai.FakeOpenAI, read_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(str(read_only / "goldens.jsonl"), capsys)
    assert f"files cannot be created in {read_only}" in line
    assert server.request_count() == 0
    assert not Path(".synth").exists()  # nothing ingested either


def test_an_output_that_is_a_folder_is_one_line_before_any_request(
    server: fake_openai.FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "out.jsonl").mkdir()
    line = refused(str(tmp_path / "out.jsonl"), capsys)
    assert "it is a folder" in line
    assert server.request_count() == 0
