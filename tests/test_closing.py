"""What synth opens from a spec string it closes: no connection is left for the collector.

An HTTP client left open keeps its connections until the garbage collector finds it (and Python
then warns ``ResourceWarning: unclosed socket`` at whatever moment that is). Each test does one
thing a user does with a spec string against the fake server, with the collector off so nothing
is cleaned up behind its back, then counts the connections to the server still established
(Linux's ``/proc/net/tcp``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path

import pytest
import synth_replies
from fake_openai import FakeOpenAI
from test_eval_openai import DATASET, judge_reply

from synth import Synthesizer, benchmark, evaluate_answers, ingest_documents
from synth.cli import main

SAMPLE = Path(__file__).resolve().parent.parent / "sample_docs"
ESTABLISHED = "01"


def established_to(port: int) -> int:
    """Connections in this network namespace to ``port`` that are still established."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            count += remote_port == port and fields[3] == ESTABLISHED
    return count


def left_open(server: FakeOpenAI, action: Callable[[], object]) -> int:
    """Connections to ``server`` that ``action`` left established, with the collector off."""
    gc.collect()
    gc.disable()
    try:
        action()
        return established_to(int(server.url.rsplit(":", 1)[1].split("/")[0]))
    finally:
        gc.enable()
        gc.collect()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAI(reply=synth_replies.reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-closing")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def test_generate_with_a_remote_embedder_closes_its_client(server, tmp_path: Path) -> None:
    kept: list[Synthesizer] = []  # alive after close(), so only close() can have closed it

    def run() -> None:
        with Synthesizer(
            "openai:gpt-4o-mini", embedder="openai:text-embedding-3-small", run_dir=tmp_path / "r"
        ) as synth:
            kept.append(synth)
            assert len(synth.generate_goldens_from_docs(SAMPLE, num_goldens=2)) == 2

    assert left_open(server, run) == 0
    assert server.request_count("embeddings") > 0


def test_ingest_from_the_command_line_and_the_library_close_the_embedder(
    server, tmp_path: Path
) -> None:
    def cli() -> None:
        args = ["ingest", str(SAMPLE), "--embedder", "openai:text-embedding-3-small"]
        assert main([*args, "--store-path", str(tmp_path / "a")]) == 0

    def library() -> None:
        report = ingest_documents(
            SAMPLE, embedder="openai:text-embedding-3-small", store_path=tmp_path / "b"
        )
        assert report.embedded > 0

    assert left_open(server, cli) == 0
    assert left_open(server, library) == 0


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAI(reply=judge_reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-closing")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def test_judges_made_from_specs_are_closed(judge_server, tmp_path: Path) -> None:
    judges = {"gpt": "openai:judge-model"}

    def evaluate() -> None:
        evaluate_answers(lambda q: "Paris", DATASET, judges=judges)

    def compare() -> None:
        systems = {"a": lambda q: "Paris", "b": lambda q: "Rome"}
        benchmark(systems, DATASET, judges=judges)

    def cli() -> None:
        data = tmp_path / "data.json"
        data.write_text(
            '[{"id": "q1", "question": "Capital?", "answer": "Paris", "reference": "Paris"}]',
            encoding="utf-8",
        )
        args = ["evaluate", str(data), "--judge", "openai:judge-model", "--metric"]
        assert main([*args, "answer_relevance", "-o", str(tmp_path / "out.json")]) == 0

    for action in (evaluate, compare, cli):
        assert left_open(judge_server, action) == 0, action.__name__
    assert judge_server.request_count("chat") > 0
