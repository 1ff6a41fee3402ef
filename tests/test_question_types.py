"""Question types: exact counts per type, the prompts that ask for each, the multi-hop check."""

from __future__ import annotations

import re
from pathlib import Path

import fake_openai
import pytest
import synth_replies

from synth import Synthesizer
from synth.cli import main
from synth.contexts.config import ContextConstructionConfig
from synth.data import Context
from synth.errors import ConfigError
from synth.generate import expected, inputs
from synth.generate.config import GenerationConfig
from synth.generate.draft import Draft
from synth.generate.question_types import (
    SINGLE_HOP,
    HopsStep,
    expected_note,
    inputs_instruction,
    type_counts,
)
from synth.llm.base import run_sync

SAMPLE = str(Path(__file__).resolve().parent.parent / "sample_docs")
CTX = Context(
    id="c", chunk_ids=["a#0", "a#1"], texts=["Flour is milled.", "Yeast rises."], source_files=["a"]
)


def test_each_type_gets_its_exact_share_by_largest_remainder() -> None:
    mix = {"simple": 0.5, "multi_hop": 0.2, "situational": 0.2, "double": 0.1}
    assert type_counts(mix, 50) == {"simple": 25, "multi_hop": 10, "situational": 10, "double": 5}
    thirds = {"simple": 1, "situational": 1, "double": 1}
    assert type_counts(thirds, 7) == {"simple": 3, "situational": 2, "double": 2}
    assert type_counts({"double": 1, "multi_hop": 0}, 4) == {"double": 4}
    for n in range(1, 40):
        counts = type_counts(mix, n)
        assert sum(counts.values()) == n
        for kind, share in mix.items():
            assert abs(counts[kind] - n * share) < 1


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ({"trick": 1.0}, "unknown question type 'trick'; use one of simple"),
        ({"simple": -0.5}, "question type 'simple' needs a share >= 0"),
        ({"simple": 0.0}, "at least one question type needs a share above 0"),
    ],
)
def test_a_bad_mix_is_one_clear_error(value: dict, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        GenerationConfig(question_types=value)


def test_each_type_is_asked_for_in_the_inputs_and_expected_prompts() -> None:
    plain = inputs.build_prompt(CTX, 2)
    assert plain == inputs.build_prompt(CTX, 2, question_type="simple")
    for kind in ("multi_hop", "situational", "double"):
        prompt = inputs.build_prompt(CTX, 2, question_type=kind)
        assert inputs_instruction(kind) in prompt and inputs_instruction(kind) not in plain
        note = expected_note(kind)
        assert note is not None and note in expected.build_prompt(["q?"], CTX, note)
    assert inputs_instruction("simple") == "" and expected_note("simple") is None


def cited(*chunks: str) -> Draft:
    draft = Draft(id="d", input="q?", context=CTX, expected_output="an answer")
    draft.metadata["citations"] = [{"chunk_id": c, "quote": "x"} for c in chunks]
    return draft


def test_a_multi_hop_answer_must_cite_two_chunks() -> None:
    one, two = cited("a#0", "a#0"), cited("a#1", "a#0")
    run_sync(HopsStep().run([one, two], None))  # type: ignore[arg-type]
    assert not one.kept and one.drop_reason == SINGLE_HOP and one.metadata["hops"] == ["a#0"]
    assert two.kept and two.metadata["hops"] == ["a#1", "a#0"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-types-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def long_docs(tmp_path: Path) -> str:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, topic in (("pumps", "heat pump"), ("panels", "solar panel"), ("cells", "battery")):
        paragraphs = [
            f"Part {i} of the {topic} guide. The {topic} unit {i} needs {i + 3} checks a year, "
            f"and its part {i} lasts {i + 8} years before it is replaced by a technician."
            for i in range(12)
        ]
        (docs / f"{name}.md").write_text("\n\n".join(paragraphs), encoding="utf-8")
    return str(docs)


def test_a_mixed_run_delivers_each_type_exactly_and_records_it(server, tmp_path: Path) -> None:
    mix = {"simple": 0.4, "multi_hop": 0.2, "situational": 0.2, "double": 0.2}
    generation = GenerationConfig(question_types=mix, grounding_threshold=0.0)
    contexts = ContextConstructionConfig(chunk_size=64, max_contexts_per_document=6)
    with Synthesizer(
        generation_config=generation, context_construction_config=contexts, embedder="hash"
    ) as synth:
        dataset = synth.generate_goldens_from_docs(long_docs(tmp_path), num_goldens=10)
    kinds = [g.metadata["question_type"] for g in dataset]
    assert {k: kinds.count(k) for k in mix} == {
        "simple": 4,
        "multi_hop": 2,
        "situational": 2,
        "double": 2,
    }
    assert dataset.metadata["question_types"]["multi_hop"] == {
        "asked": 2,
        "delivered": 2,
        "run_id": dataset.metadata["question_types"]["multi_hop"]["run_id"],
    }
    tests = {g.metadata["question_type"]: g.metadata["tests"] for g in dataset}
    assert tests["multi_hop"] == "retriever" and tests["double"] == "generator"
    for golden in dataset:
        if golden.metadata["question_type"] == "multi_hop":
            assert len(golden.metadata["hops"]) >= 2 and len(golden.context_ids) >= 2
        if golden.metadata["question_type"] != "simple":
            assert golden.metadata["evolutions"] == []  # only simple questions are evolved
    # the types did not share a context
    contexts_used = [frozenset(g.context_ids) for g in dataset]
    by_type: dict[str, set[str]] = {}
    for golden in dataset:
        by_type.setdefault(golden.metadata["question_type"], set()).update(golden.context_ids)
    kinds_seen = list(by_type)
    for i, a in enumerate(kinds_seen):
        for b in kinds_seen[i + 1 :]:
            assert not by_type[a] & by_type[b]
    assert len(contexts_used) == 10
    double_prompts = [
        r.prompt for r in server.requests_to("chat") if inputs_instruction("double") in r.prompt
    ]
    assert double_prompts  # the double run asked for double questions


def test_a_model_that_answers_from_one_passage_makes_no_multi_hop_golden(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def one_passage(request: dict) -> object:
        for message in request.get("messages") or []:
            content = str(message.get("content", ""))
            message["content"] = content.replace("quote each passage the answer needs", "")
        return synth_replies.reply(request)

    with fake_openai.FakeOpenAI(reply=one_passage) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-types-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        generation = GenerationConfig(question_types={"multi_hop": 1.0}, grounding_threshold=0.0)
        contexts = ContextConstructionConfig(chunk_size=64, max_retries=1)
        with Synthesizer(
            generation_config=generation, context_construction_config=contexts, embedder="hash"
        ) as synth:
            with pytest.warns(UserWarning):
                dataset = synth.generate_goldens_from_docs(long_docs(tmp_path), num_goldens=2)
            manifest = synth.manifest
    assert len(dataset) == 0
    assert dataset.shortfall is not None
    dropped = {row["stage"]: row["dropped"] for row in manifest["stages"]}
    assert dropped["hops"].get(SINGLE_HOP, 0) > 0


def test_the_closing_line_of_a_mixed_run_pairs_the_goldens_written_with_those_asked(
    server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    pipeline = tmp_path / "mixed.toml"
    pipeline.write_text(
        "[generation]\ngrounding_threshold = 0.0\n"
        "question_types = { simple = 0.75, situational = 0.25 }\n"
        "[contexts]\nchunk_size = 64\n",
        encoding="utf-8",
    )
    argv = ["generate", long_docs(tmp_path), "--goldens", "4", "--embedder", "hash"]
    assert main([*argv, "--pipeline", str(pipeline), "-o", "out.jsonl"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    # the last type's run asked for 1 of the 4: the line is about the whole dataset
    assert last.startswith("wrote 4 of 4 goldens to out.jsonl;"), last
    # and so are its requests: every type's, not the last run's alone
    requests = int(re.search(r"; (\d+) requests", last).group(1))  # type: ignore[union-attr]
    assert requests == len(server.requests_to("chat")), last
    assert last.count(".synth/runs/") == 2, last  # both runs named


def test_a_mixed_runs_manifest_sums_every_types_stages_and_names_each_run(
    server, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.chdir(tmp_path)
    pipeline = tmp_path / "mixed.toml"
    pipeline.write_text(
        "[generation]\ngrounding_threshold = 0.0\n"
        "question_types = { simple = 0.75, situational = 0.25 }\n"
        "[contexts]\nchunk_size = 64\n",
        encoding="utf-8",
    )
    argv = ["generate", long_docs(tmp_path), "--goldens", "4", "--embedder", "hash", "--json"]
    assert main([*argv, "--pipeline", str(pipeline), "-o", "out.jsonl"]) == 0
    manifest = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert manifest["num_goldens"] == 4 and manifest["delivered"] == 4
    assert sorted(manifest["parts"]) == ["simple", "situational"]
    assert [p["delivered"] for p in manifest["parts"].values()] == [3, 1]
    rows = {row["stage"]: row for row in manifest["stages"]}
    assert rows["expected"]["items_out"] >= 4  # three of one run's and one of the other's
    assert manifest["totals"]["requests"] == len(server.requests_to("chat"))
    assert sum(row["requests"] for row in manifest["stages"]) == manifest["totals"]["requests"]
    each = [
        json.loads((Path(p["run_dir"]) / "manifest.json").read_text(encoding="utf-8"))
        for p in manifest["parts"].values()
    ]
    assert manifest["totals"]["requests"] == sum(m["totals"]["requests"] for m in each)


def test_mixed_types_need_documents(server) -> None:
    generation = GenerationConfig(question_types={"simple": 1, "double": 1})
    with Synthesizer(generation_config=generation, embedder="hash") as synth:
        with pytest.raises(ConfigError, match="mixed question_types are made from documents"):
            synth.generate_goldens_from_contexts([["Flour is milled."]], num_goldens=2)
