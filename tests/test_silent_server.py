"""A model server that accepts connections and never answers (a proxy or firewall dropping the
traffic) stops ``synth generate`` with one line and exit 2, instead of hanging for every request's
timeout times its retries, stage after stage (synth/llm/timeout.py: SilenceBreaker); so does a
judge's server (evaluate, benchmark, gate) and an embedding server (EndpointGuard.timed_out)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from synth_runs import SAMPLE, child_env

from synth.errors import EndpointError, ModelTimeoutError, ServerError
from synth.llm.base import LLM, Completion
from synth.llm.timeout import SilenceBreaker, TimeoutModel

#: what the requirement allows a silent server with the default settings (see docs/cli.md)
REQUIRED_END = 180.0


@contextlib.contextmanager
def black_hole() -> Iterator[tuple[str, list[socket.socket]]]:
    """A server on 127.0.0.1 that accepts every connection and never sends a byte: its URL,
    and the connections it holds (open until the block ends)."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)  # read nothing, answer nothing

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", held
    finally:
        stop.set()
        thread.join()
        listener.close()
        for conn in held:
            conn.close()


def test_a_server_that_never_answers_stops_generate_with_one_line_and_exit_2(
    tmp_path: Path,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    with black_hole() as (url, held):
        cmd = [
            sys.executable,
            "-m",
            "synth",
            "generate",
            str(SAMPLE),
            "--goldens",
            "4",
            "--model",
            "openai:fake-model",
            "--base-url",
            url,
            "--embedder",
            "hash",
            "--timeout",
            "2",
            "-o",
            "out.jsonl",
            "--quiet",
        ]
        env = child_env(OPENAI_API_KEY="sk-test-not-a-real-key")
        done = subprocess.run(
            cmd, cwd=work, env=env, capture_output=True, text=True, timeout=REQUIRED_END
        )
        assert held, "the run never connected to the server"
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    # one line says what went wrong (a first run on a machine may also print tiktoken's notice)
    lines = [line for line in done.stderr.splitlines() if line.startswith("synth:")]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("synth: error: the model server at http://127.0.0.1:")
    assert "no reply of any kind within 2 s" in lines[0]
    assert not (work / "out.jsonl").exists()
    assert not list(work.glob(".*.lock"))
    (manifest_path,) = (work / ".synth" / "runs").glob("*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    assert manifest["status"] == "failed"
    assert "no reply of any kind" in manifest["error"]


class Silent(LLM):
    """A model whose server answers as told: ``"hang"`` never, ``"ok"`` at once, ``"503"`` with
    a server error."""

    provider = "openai"
    model = "silent"

    def __init__(self, script: list[str]) -> None:
        self.script = script

    async def arequest(self, prompt: str, **kw: object) -> Completion:
        step = self.script.pop(0)
        if step == "hang":
            await asyncio.Event().wait()
        if step == "503":
            raise ServerError("503 Service Unavailable")
        return Completion(text="fine", model=self.model)


def test_a_server_that_answered_is_given_three_timeouts_in_a_row_while_waiting_is_said() -> None:
    breaker = SilenceBreaker()
    said: list[str] = []
    breaker.notify = said.append
    script = ["ok", "hang", "hang", "503", "hang", "hang", "hang", "ok"]
    model = TimeoutModel(Silent(script), timeout=0.05, breaker=breaker)

    async def run() -> list[str]:
        outcomes = []
        for _ in range(7):
            try:
                await model.arequest("q")
                outcomes.append("ok")
            except ModelTimeoutError:
                outcomes.append("timeout")
            except ServerError:
                outcomes.append("503")
            except EndpointError as exc:
                outcomes.append(f"stop: {exc}")
        return outcomes

    outcomes = asyncio.run(run())
    # a 503 is a reply: the count starts again after it; the third timeout in a row stops the run
    assert outcomes[:6] == ["ok", "timeout", "timeout", "503", "timeout", "timeout"]
    assert outcomes[6].startswith("stop: the model server is silent (3 requests in a row")
    assert len(said) == 4 and all(line.startswith("waiting on the server") for line in said)
    with pytest.raises(EndpointError):  # tripped: nothing more is sent
        asyncio.run(model.arequest("q"))
    assert script == ["ok"]


def test_a_server_that_never_replied_stops_at_its_first_timeout() -> None:
    model = TimeoutModel(Silent(["hang", "ok"]), timeout=0.05, breaker=SilenceBreaker())
    with pytest.raises(EndpointError, match="sent no reply at all"):
        asyncio.run(model.arequest("q"))


@pytest.mark.parametrize(
    "command",
    [
        ["evaluate", "goldens.jsonl", "--system", "{module}:answer"],
        [
            "benchmark",
            "goldens.jsonl",
            "--system",
            "a={module}:answer",
            "--system",
            "b={module}:answer",
        ],
        [
            "gate",
            "goldens.jsonl",
            "--system",
            "{module}:answer",
            "--baseline",
            "b.json",
            "--update-baseline",
        ],
    ],
    ids=["evaluate", "benchmark", "gate"],
)
def test_a_judge_server_that_never_answers_stops_the_command_with_one_line_and_exit_2(
    command: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Each judge call waited its timeout times its retries: a quarter of an hour of silence."""
    import time
    import uuid

    from synth import Dataset, Golden
    from synth.cli import main

    module = f"silent_judged_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text("def answer(question):\n    return '4'\n")
    goldens = [Golden(input=f"What is {n} + {n}?", expected_output=str(2 * n)) for n in range(4)]
    Dataset(goldens).save(tmp_path / "goldens.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the cwd; undo it after
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    argv = [part.format(module=module) for part in command]
    with black_hole() as (url, held):
        started = time.monotonic()
        code = main([*argv, "--judge", "openai:m", "--base-url", url, "--timeout", "1"])
        took = time.monotonic() - started
        assert held, "the command never connected to the server"
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    (line,) = [line for line in err.splitlines() if line.startswith("synth:")]
    assert line.startswith(f"synth: error: the model server at {url}")
    assert "no reply of any kind within 1 s" in line
    assert took < 30  # one deadline, not every call's timeouts and retries
    assert not (tmp_path / "b.json").exists()


def test_an_embedding_server_that_never_answers_stops_ingest_at_its_first_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each batch waited its timeout times its retries: seven minutes of silence, then 'the
    request timed out'."""
    import time

    from synth.store.openai_embedder import OpenAIEmbedder

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with black_hole() as (url, held):
        embedder = OpenAIEmbedder("e", base_url=url, timeout=1)
        started = time.monotonic()
        with pytest.raises(EndpointError) as caught:
            embedder.embed(["a text", "another"])
        took = time.monotonic() - started
        assert held
        with pytest.raises(EndpointError):  # later batches are not even sent
            embedder.embed(["one more"])
        embedder.close()
    assert str(caught.value).startswith(f"the embedding server at {url} is silent")
    assert "no reply of any kind within 1 s" in str(caught.value)
    assert took < 10  # one timeout, not one per retry
    assert embedder.usage.total.retries == {}


def test_a_server_that_never_answers_stops_a_batch_run_at_its_first_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A batch chain has no TimeoutModel: each upload's timeout was retried as the request's
    own, minutes of silence (the timeout times the retries, wave after wave), then exit 3."""
    import time

    from synth.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with black_hole() as (url, held):
        argv = ["generate", str(SAMPLE), "--goldens", "2", "--model", "openai:m", "--batch"]
        started = time.monotonic()
        code = main([*argv, "--base-url", url, "--embedder", "hash", "--timeout", "1", "--quiet"])
        took = time.monotonic() - started
        assert held, "the run never connected to the server"
    err = capsys.readouterr().err
    assert code == 2, err
    (line,) = [line for line in err.splitlines() if line.startswith("synth:")]
    assert line.startswith(f"synth: error: the model server at {url}")
    assert "no reply of any kind within 1 s" in line
    assert took < 30
    assert not (tmp_path / "goldens.jsonl").exists()
