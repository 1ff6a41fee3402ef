"""Real ``synth generate`` processes against the fake OpenAI server in a subprocess, for the tests
that stop, interrupt or race them (test_pipeline_resume, test_interrupt, test_run_lifecycle,
test_stop_signals). The run after a stop, which only has to read what the stopped process left,
runs in the test's own process (:func:`finish_here`).

Every wait is on a condition the run itself brings about (a line in the server's request log, a
file in the run directory), polled with a generous bound; nothing waits on a fixed sleep. Every
process started here is ended and reaped, even when a test fails, so none outlives its test.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from synth.dataset import Dataset
from synth.llm.sqlite_cache import SQLiteCache

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SAMPLE = REPO / "sample_docs"
GOLDENS = 20
#: the bound on a wait the run's own progress ends (a failure bound, not a measure of speed)
PATIENCE = 180.0
#: a run must have ended this many seconds after Ctrl-C (the requirement, checked as a deadline)
STOP_DEADLINE = 2.0


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SYNTH_REPLIES")}
    env.update(extra)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(REPO), env.get("PYTHONPATH", "")])
    return env


def end_process(proc: subprocess.Popen) -> None:
    """Kill ``proc`` if it still runs and reap it (closing its pipes)."""
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=30)


class Server:
    """``tests/fake_openai.py`` in a subprocess, logging every request to a file."""

    def __init__(self, folder: Path, latency: float = 0.02, **env: str) -> None:
        self.log = folder / f"requests-{time.monotonic_ns()}.jsonl"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(TESTS / "fake_openai.py"),
                "--port",
                "0",
                "--latency",
                str(latency),
                "--replies",
                "synth_replies:reply",
                "--log",
                str(self.log),
            ],
            stdout=subprocess.PIPE,
            text=True,
            env=child_env(**env),
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
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@contextlib.contextmanager
def servers(folder: Path) -> Iterator[Callable[..., Server]]:
    """A factory of servers, every one of them closed at the end of the block."""
    started: list[Server] = []

    def start(**options: object) -> Server:
        server = Server(folder, **options)  # type: ignore[arg-type]
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.close()


def command(server: Server, *extra: str, goldens: int = GOLDENS, docs: Path = SAMPLE) -> list[str]:
    return [
        sys.executable,
        "-m",
        "synth",
        "generate",
        str(docs),
        "--goldens",
        str(goldens),
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


CLIENT_KEY = "sk-test-resume-not-a-real-key"


def client_env() -> dict[str, str]:
    return child_env(OPENAI_API_KEY=CLIENT_KEY)


@contextlib.contextmanager
def started(cmd: list[str], cwd: Path) -> Iterator[subprocess.Popen]:
    """``cmd`` started in ``cwd`` (stderr captured), killed and reaped when the block ends."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=client_env(), stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        end_process(proc)


def finish_here(cmd: list[str], cwd: Path, key: str = CLIENT_KEY) -> subprocess.CompletedProcess:
    """Run ``cmd`` (a ``python -m synth`` command) to its end in this process, in ``cwd``, with
    ``key`` (by default the key of a run :func:`started`): its exit code, stdout and stderr, as
    ``subprocess.run`` gives them. For the run after a stopped one, which reads what the stopped
    process left on disk as a new process would (the stop itself stays a real process), and for
    a reference run: a new interpreter spent about 2 s importing synth's dependencies before the
    command began. A run here has no PATIENCE bound: one that hangs hangs its test."""
    from synth.cli import main

    assert cmd[1:3] == ["-m", "synth"], cmd
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with (
            mock.patch.dict(os.environ, {"OPENAI_API_KEY": key}),
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
        ):
            code = main(cmd[3:])
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def wait_for(condition: Callable[[], bool], proc: subprocess.Popen, what: str) -> None:
    """Poll until ``condition`` holds (the run's own progress decides when, not a clock)."""
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def interrupt(proc: subprocess.Popen) -> str:
    """Press Ctrl-C (SIGINT) and wait at most STOP_DEADLINE for the process to end; its stderr."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=STOP_DEADLINE)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the run was still going {STOP_DEADLINE} s after Ctrl-C") from None
    _, stderr = proc.communicate()
    return stderr


def recorded(cache: Path) -> int:
    """Answers the run stored in its response cache (what it had received, from its side)."""
    if not cache.exists():
        return 0
    with SQLiteCache(cache) as stored:
        return len(stored)


def repeats(bodies: list[str]) -> int:
    """How many of these request bodies were sent again after their first time."""
    return len(bodies) - len(set(bodies))


def manifests(work: Path) -> list[Path]:
    return sorted((work / ".synth" / "runs").glob("*/manifest.json"))


def read_manifest(work: Path) -> dict | None:
    """The manifest of the one run in ``work`` (None before it is written)."""
    found = manifests(work)
    if not found:
        return None
    with contextlib.suppress(ValueError, FileNotFoundError):  # replaced atomically, but be safe
        return json.loads(found[0].read_text())
    return None


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
    done = finish_here(command(server), folder)
    assert done.returncode == 0, done.stderr
    return Dataset.load(folder / "out.jsonl")
