"""Kill a real ``synth generate`` process midway (SIGKILL, or Ctrl-C), run the same command again:
no completed request is made twice, no golden is lost or doubled, and the dataset equals an
uninterrupted run's. The fake OpenAI server runs as a subprocess with ``synth_replies:reply``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from synth.dataset import Dataset
from synth.llm.sqlite_cache import SQLiteCache

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLE = REPO / "sample_docs"
GOLDENS = 20


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNTH_REPLIES")}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(REPO), env.get("PYTHONPATH", "")])
    return env


class Server:
    """``tests/fake_openai.py`` in a subprocess, logging every request to a file."""

    def __init__(self, folder: Path, **env: str) -> None:
        self.log = folder / "requests.jsonl"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(TESTS / "fake_openai.py"),
                "--port",
                "0",
                "--latency",
                "0.02",
                "--replies",
                "synth_replies:reply",
                "--log",
                str(self.log),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=_env(**env),
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:"), self.url

    def chat(self, outcome: str | None = "ok") -> list[dict]:
        if not self.log.exists():
            return []
        rows = []
        # the server may be writing a line right now: read only the complete ones
        for line in self.log.read_text().split("\n")[:-1]:
            row = json.loads(line)
            if row["path"].endswith("/chat/completions") and (
                outcome is None or row["outcome"] == outcome
            ):
                rows.append(row)
        return rows

    def answered(self) -> list[str]:
        """The bodies of the chat requests answered so far, in the order they were answered."""
        return [json.dumps(row["body"], sort_keys=True) for row in self.chat()]

    def repeated(self, completed: list[str]) -> list[str]:
        """Which of the ``completed`` requests the server has answered more than once by now."""
        answered = self.answered()
        return [body for body in set(completed) if answered.count(body) > 1]

    def close(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def start(**env: str) -> Server:
        server = Server(tmp_path, **env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def command(server: Server, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "synth",
        "generate",
        str(SAMPLE),
        "--goldens",
        str(GOLDENS),
        "--model",
        "openai:fake-model",
        "--base-url",
        server.url,
        "--embedder",
        "hash",
        "--seed",
        "5",
        "-o",
        "out.jsonl",
        "--quiet",
        *extra,
    ]


def client_env() -> dict[str, str]:
    return _env(OPENAI_API_KEY="sk-test-resume-not-a-real-key")


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
    """Poll until ``condition`` holds (the run's own progress decides when, not a clock)."""
    deadline = time.monotonic() + 120
    try:
        while not condition():
            assert proc.poll() is None, f"the run ended before {what}"
            assert time.monotonic() < deadline, f"gave up waiting for {what}"
            time.sleep(0.01)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise


def recorded(cache: Path) -> int:
    """Answers the run stored in its response cache (what it had received, from its side)."""
    if not cache.exists():
        return 0
    with SQLiteCache(cache) as stored:
        return len(stored)


def repeats(bodies: list[str]) -> int:
    """How many of these request bodies were sent again after their first time."""
    return len(bodies) - len(set(bodies))


def check_only_lost_answers_were_repeated(
    server: Server, dead_at: float, cache_entries: int, max_concurrent: int
) -> int:
    """Call right after the rerun: every request the server answered twice was one whose answer
    the killed run never recorded (it was in flight when the process died), and there were at
    most ``max_concurrent`` of those. ``dead_at``: ``time.monotonic()`` once the killed process
    had exited (the server logs its own ``time.monotonic()``, the same clock on Linux).
    Returns the number of answers lost that way."""
    rows = server.chat()
    answered_before = sum(1 for row in rows if row["started"] < dead_at)
    lost = answered_before - cache_entries
    assert 0 <= lost <= max_concurrent, (answered_before, cache_entries)
    assert repeats(server.answered()) <= lost
    return lost


def reference_dataset(server: Server, folder: Path) -> Dataset:
    folder.mkdir()
    done = subprocess.run(
        command(server), cwd=folder, env=client_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return Dataset.load(folder / "out.jsonl")


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["sigkill", "ctrl-c"])
def test_stopped_between_requests_then_rerun_repeats_no_completed_request(
    tmp_path: Path, server_factory: Callable[..., Server], stop: signal.Signals
) -> None:
    release = tmp_path / "release-the-gate"
    gate = 25  # about half the run's requests
    server = server_factory(SYNTH_REPLIES_GATE=str(gate), SYNTH_REPLIES_RELEASE=str(release))
    work = tmp_path / "work"
    work.mkdir()
    cache = work / ".synth" / "cache.sqlite"
    run = subprocess.Popen(
        command(server), cwd=work, env=client_env(), stderr=subprocess.PIPE, text=True
    )

    def answered_and_recorded() -> bool:
        # the gate holds every later request: wait until the run has stored all the answers
        return len(server.chat()) >= gate and recorded(cache) >= gate

    wait_for(answered_and_recorded, run, f"{gate} answers were recorded")
    run.send_signal(stop)
    _, stderr = run.communicate(timeout=60)
    completed = server.answered()
    assert len(completed) == gate
    assert not (work / "out.jsonl").exists()
    manifests = list((work / ".synth" / "runs").glob("*/manifest.json"))
    assert len(manifests) == 1
    status = json.loads(manifests[0].read_text())["status"]
    if stop == signal.SIGKILL:
        assert run.returncode == -signal.SIGKILL and status == "running"  # killed, not finished
    else:  # Ctrl-C while requests hang at the server: a clean stop all the same
        assert run.returncode == 130, stderr
        assert "Traceback" not in stderr and "run the same command again to resume" in stderr
        assert status == "interrupted"

    release.touch()
    rerun = subprocess.run(
        command(server), cwd=work, env=client_env(), capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr
    # no request completed before the stop was made again (the requests the gate held were
    # answered to a dead process once it opened: the rerun had to make those)
    assert server.repeated(completed) == []
    resumed = Dataset.load(work / "out.jsonl")
    assert len(resumed) == GOLDENS
    assert len({g.metadata["draft_id"] for g in resumed}) == GOLDENS  # none doubled
    manifest = json.loads(manifests[0].read_text())
    assert manifest["status"] == "complete" and len(manifest["sessions"]) == 2
    assert manifest["stages"][-1]["items_out"] == GOLDENS

    reference = reference_dataset(server, tmp_path / "reference")
    assert [g.model_dump() for g in resumed] == [g.model_dump() for g in reference]


@pytest.mark.slow
def test_sigkill_mid_flight_then_rerun_gives_the_uninterrupted_dataset(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.Popen(command(server, "--max-concurrent", "4"), cwd=work, env=client_env())

    def some_contexts_filtered() -> bool:
        found = list((work / ".synth" / "runs").glob("*/filter.jsonl"))
        return bool(found) and len(found[0].read_text().splitlines()) >= 3

    wait_for(some_contexts_filtered, run, "three contexts were filtered")
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=30)
    dead_at = time.monotonic()
    stored = recorded(work / ".synth" / "cache.sqlite")
    assert stored > 0
    rerun = subprocess.run(
        command(server, "--max-concurrent", "4"),
        cwd=work,
        env=client_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    # a kill at any moment: only answers still on their way to the run (at most
    # --max-concurrent) can have been lost, and only those were asked for again
    lost = check_only_lost_answers_were_repeated(server, dead_at, stored, 4)
    both_runs = len(server.chat())
    resumed = Dataset.load(work / "out.jsonl")
    reference = reference_dataset(server, tmp_path / "reference")
    assert [g.model_dump() for g in resumed] == [g.model_dump() for g in reference]
    whole_run = len(server.chat()) - both_runs
    assert repeats(server.answered()[both_runs:]) == 0  # an uninterrupted run repeats nothing
    assert both_runs <= whole_run + lost  # the rerun did only what was left


@pytest.mark.slow
def test_ctrl_c_mid_flight_stops_cleanly_keeping_everything_done(
    tmp_path: Path, server_factory: Callable[..., Server]
) -> None:
    server = server_factory()
    work = tmp_path / "work"
    work.mkdir()
    run = subprocess.Popen(
        command(server, "--max-concurrent", "4"),
        cwd=work,
        env=client_env(),
        stderr=subprocess.PIPE,
        text=True,
    )

    def some_inputs_written() -> bool:
        found = list((work / ".synth" / "runs").glob("*/inputs.jsonl"))
        return bool(found) and len(found[0].read_text().splitlines()) >= 2

    wait_for(some_inputs_written, run, "two contexts had inputs")
    run.send_signal(signal.SIGINT)
    _, stderr = run.communicate(timeout=60)
    dead_at = time.monotonic()
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "run the same command again to resume" in stderr
    manifest_file = next((work / ".synth" / "runs").glob("*/manifest.json"))
    assert json.loads(manifest_file.read_text())["status"] == "interrupted"
    stored = recorded(work / ".synth" / "cache.sqlite")
    assert len(json.loads(manifest_file.read_text())["sessions"]) == 1
    rerun = subprocess.run(
        command(server), cwd=work, env=client_env(), capture_output=True, text=True, timeout=300
    )
    assert rerun.returncode == 0, rerun.stderr
    assert len(Dataset.load(work / "out.jsonl")) == GOLDENS
    check_only_lost_answers_were_repeated(server, dead_at, stored, 4)
