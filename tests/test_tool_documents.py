"""Agent goldens from tools and documents (the agent answers from a knowledge base and calls
tools): the real openai SDK over HTTP to the fake server (answering from the JSON schema alone),
an OpenAI tools file, a small folder of documents. Exactly N goldens; the ``knowledge`` ones
grounded in the documents (their passages as context, an expected output, no call), the others
with their calls as from tools alone; the call's manifest names both sources and counts every
drop; a bad combination is one error line before any request."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import fake_openai
import pytest
from jsonschema import validate
from tool_sources import write_openai_tools

from synth import Synthesizer
from synth.cli import main
from synth.errors import ConfigError
from synth.pipeline.tools import DOCUMENT_KINDS, checked_kinds
from synth.tools import load_tools

BAGGAGE = """# Baggage on our flights

Every passenger may bring one cabin bag of at most 8 kg and 55 x 40 x 23 cm. A second small
item, such as a handbag or a laptop bag, fits under the seat in front.

Checked bags weigh at most 23 kg each. A bag between 23 and 32 kg costs 60 euros more; heavier
bags travel as cargo. Sports equipment needs to be announced 48 hours before departure.
"""
CHECK_IN = """# Check-in and boarding

Online check-in opens 30 hours before departure and closes 60 minutes before it. At the airport
the desks close 45 minutes before departure for flights within Europe.

Boarding starts 40 minutes before departure; the gate closes 15 minutes before it. Passengers
who arrive later lose their seat and are rebooked on the next flight for a fee of 75 euros.
"""


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A tools file and a folder of two documents about the same airline."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-tool-docs-not-a-real-key")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "baggage.md").write_text(BAGGAGE, encoding="utf-8")
    (docs / "check_in.md").write_text(CHECK_IN, encoding="utf-8")
    return write_openai_tools(tmp_path / "tools.json"), docs


def synthesizer(url: str, tmp_path: Path) -> Synthesizer:
    # a model answering from the schema cannot quote the context: no grounding gate
    return Synthesizer(
        "openai:fake-model",
        base_url=url,
        embedder="hash",
        cache=None,
        run_dir=tmp_path / "run",
        store_path=tmp_path / "chroma",
        progress=False,
        grounding_threshold=0,
    )


def test_documents_and_tools_give_exactly_n_goldens_grounded_or_calling(
    sources: tuple[Path, Path], tmp_path: Path
) -> None:
    tools_file, docs = sources
    tools = {t.name: t for t in load_tools(str(tools_file))}
    with fake_openai.FakeOpenAI(mode="generic", seed=3) as server:
        with synthesizer(server.url, tmp_path) as synth:
            dataset = synth.generate_goldens_from_tools(
                str(tools_file), num_goldens=10, documents=docs
            )
            manifest = synth.manifest
    assert len(dataset) == 10 and dataset.shortfall is None
    kinds = Counter(g.metadata["tool_kind"] for g in dataset)
    assert kinds == {k: v["asked"] for k, v in dataset.metadata["tool_kinds"].items()}
    assert set(kinds) == set(DOCUMENT_KINDS) and kinds["knowledge"] == 2
    texts = BAGGAGE + CHECK_IN
    for golden in dataset:
        if golden.metadata["tool_kind"] == "knowledge":
            # answered from the documents: their passages, an answer, no call
            assert golden.expected_tools == [] and golden.expected_output
            assert golden.context and all(passage.strip() in texts for passage in golden.context)
            assert all(Path(f).parent.name == "docs" for f in golden.source_files)
        else:
            assert golden.expected_tools is not None
            for call in golden.expected_tools:
                validate(call.input_parameters, tools[call.name].input_schema)
    # the call's manifest: both sources, the documents' coverage, every run's drops summed
    assert manifest is not None
    assert manifest["sources"]["tools"]["tools"] == list(tools)
    assert manifest["sources"]["documents"]["files"] == 2
    assert manifest["coverage"]["files_ingested"] == 2
    assert sorted(manifest["parts"]) == sorted(kinds) and manifest["delivered"] == 10
    dropped: Counter[str] = Counter()
    for path in (tmp_path / "run").rglob("manifest.json"):
        for row in json.loads(path.read_text(encoding="utf-8"))["stages"]:
            dropped.update(row.get("dropped") or {})
    summed: Counter[str] = Counter()
    for row in manifest["stages"]:
        summed.update(row.get("dropped") or {})
    assert +summed == +dropped
    stages = {row["stage"] for row in manifest["stages"]}
    assert {"ingest", "inputs", "tool_requests", "tool_check"} <= stages


@pytest.mark.parametrize(
    ("kinds", "documents", "fragment"),
    [
        ({"knowledge": 1.0}, False, "the knowledge kind answers from documents"),
        ({"single_call": 1.0}, True, "give it a share"),
        ({"knowledge": 0.0, "single_call": 1.0}, True, "give it a share"),
        ({"knowledges": 1.0}, True, "unknown tool golden kind 'knowledges'"),
    ],
)
def test_documents_and_the_knowledge_kind_go_together(
    kinds: dict[str, float], documents: bool, fragment: str
) -> None:
    with pytest.raises(ConfigError, match=fragment):
        checked_kinds(kinds, documents)


def test_the_default_kinds_with_documents_include_knowledge() -> None:
    assert checked_kinds(None, True) == DOCUMENT_KINDS
    assert "knowledge" not in checked_kinds(None, False)


@pytest.mark.parametrize("docs_first", [True, False])
def test_generate_takes_documents_beside_tools_in_either_order(
    sources: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    docs_first: bool,
) -> None:
    tools_file, docs = sources
    out = tmp_path / "agent.jsonl"
    given = [str(docs), "--tools", str(tools_file)]
    if not docs_first:  # as the issue writes it: --tools SOURCE DOCS
        given = ["--tools", str(tools_file), str(docs)]
    with fake_openai.FakeOpenAI(mode="generic", seed=5) as server:
        code = main(
            [
                "generate", *given, "--goldens", "4", "--tool-kinds",
                "single_call=1,knowledge=1", "--model", "openai:fake", "--base-url",
                server.url, "--embedder", "hash", "--grounding-threshold", "0", "--run-dir",
                str(tmp_path / "run"), "-o", str(out), "--json",
            ]
        )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert Counter(row["metadata"]["tool_kind"] for row in rows) == {
        "single_call": 2,
        "knowledge": 2,
    }
    for row in rows:
        assert bool(row["expected_tools"]) == (row["metadata"]["tool_kind"] == "single_call")
    printed = json.loads(captured.out)
    assert printed["goldens"] == 4 and printed["sources"]["documents"]["files"] == 2


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--tool-kinds", "knowledge=1"], "the knowledge kind answers from documents"),
        (["DOCS", "--tool-kinds", "single_call=1"], "give it a share"),
        (["--from-chroma", "store:coll"], "not from --from-chroma"),
        (["DOCS", "--plan"], "--plan does not apply to --tools"),
        (["nowhere/"], "no such file or folder: nowhere/"),
    ],
)
def test_a_bad_combination_of_documents_and_tools_is_one_error_line(
    sources: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    fragment: str,
) -> None:
    tools_file, docs = sources
    argv = ["generate", "--tools", str(tools_file), "--goldens", "3"]
    argv += [str(docs) if a == "DOCS" else a for a in extra]
    with fake_openai.FakeOpenAI(mode="generic") as server:
        argv += ["--model", "openai:fake", "--base-url", server.url, "--embedder", "hash"]
        argv += ["--run-dir", str(tmp_path / "run"), "-o", str(tmp_path / "o.jsonl"), "--quiet"]
        code = main(argv)
        assert server.request_count() == 0  # refused before any request
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("synth: error: ")]
    assert len(lines) == 1 and fragment in lines[0], err
