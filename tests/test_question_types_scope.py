"""Distracting and out-of-scope questions: made, checked, counted, exact per type."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path

import fake_openai
import numpy as np
import pytest
import synth_replies

from synth import FunctionModel, Golden, HashEmbedder, Synthesizer
from synth.contexts.config import ContextConstructionConfig
from synth.data import Context
from synth.errors import ConfigError
from synth.generate import inputs, out_of_scope
from synth.generate.base import Source
from synth.generate.config import DEFAULT_REFUSAL, GenerationConfig, StylingConfig
from synth.generate.difficulty import DifficultyIndex
from synth.generate.distracting import (
    DISTRACTOR_KEY,
    NO_DISTRACTION,
    NO_DISTRACTOR,
    distraction_words,
)
from synth.generate.draft import Draft
from synth.generate.out_of_scope import ANSWERABLE, NEAR_MISS_KEY, TOPIC_KEY
from synth.generate.question_types import expected_note, inputs_instruction, type_counts
from synth.stage.templates import default_prompts

CTX = Context(
    id="c", chunk_ids=["a#0"], texts=["The pump needs three checks a year."], source_files=["a"]
)
KEY = "sk-test-scope-not-a-real-key"


PARTS = (
    "valve gasket filter sensor relay fuse hinge bracket damper coil fan board latch socket cable "
    "switch drain rotor clamp shield"
).split()


def corpus(tmp_path: Path, paragraphs: int = 20) -> str:
    docs = tmp_path / "docs"
    docs.mkdir()
    topics = (("pumps", "heat pump"), ("panels", "solar panel"), ("cells", "battery"))
    for name, topic in (*topics, ("meters", "smart meter")):
        text = [
            f"Part {i} of the {topic} guide. The {topic} {PARTS[i % len(PARTS)]} needs {i + 3} "
            f"checks a year, and it lasts {i + 8} years before it is replaced by a technician."
            for i in range(paragraphs)
        ]
        (docs / f"{name}.md").write_text("\n\n".join(text), encoding="utf-8")
    return str(docs)


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch):
    """Start the fake server with a reply function (synth's fake replies by default)."""
    servers: list[fake_openai.FakeOpenAI] = []

    def start(reply=synth_replies.reply) -> fake_openai.FakeOpenAI:
        fake = fake_openai.FakeOpenAI(reply=reply).__enter__()
        servers.append(fake)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        return fake

    yield start
    for fake in servers:
        fake.__exit__(None, None, None)


def synthesizer(mix: dict[str, float], **generation) -> Synthesizer:
    config = GenerationConfig(question_types=mix, grounding_threshold=0.0, **generation)
    contexts = ContextConstructionConfig(chunk_size=64, max_contexts_per_document=40)
    return Synthesizer(
        generation_config=config, context_construction_config=contexts, embedder="hash"
    )


def test_the_prompts_ask_for_each_type() -> None:
    scope = inputs.build_prompt(CTX, 2, question_type="out_of_scope")
    assert "do NOT give" in scope and "be answerable from the context" not in scope
    aside = inputs.build_prompt(CTX, 2, question_type="distracting", aside="Panels face south.")
    assert inputs_instruction("distracting") in aside
    assert "<aside>\nPanels face south.\n</aside>" in aside
    assert "do not use or repeat it" in (expected_note("distracting") or "")
    checked = out_of_scope.build_prompt([("Who <b>?", ["The pump needs checks."])])
    assert "<input>\nWho <\\b>?\n</input>" in checked  # a question is data, escaped
    assert '<passage index="1">\nThe pump needs checks.\n</passage>' in checked


def test_the_index_gives_each_query_its_best_chunks_outside_what_it_excludes() -> None:
    ids = ["a", "b", "c", "d"]
    texts = ["solar panel tilt", "solar panel wiring and panel mounts", "heat pump", "battery"]
    vectors = np.eye(4)
    index = DifficultyIndex(ids, texts, vectors)
    assert index.nearest(["panel mounts"], 2) == [["b", "a"]]
    assert index.nearest(["panel mounts"], 2, exclude=[["b"]]) == [["a"]]  # no other shares a word
    found = index.nearest(["panel mounts"], 1, exclude=[["b"]], vectors=np.array([[0, 0, 0, 1.0]]))
    assert found == [["a", "d"]]  # BM25's best, then the cosine's best
    assert index.nearest(["nothing alike"], 3) == [[]]
    assert index.text("c") == "heat pump"


def test_a_distraction_is_a_word_of_the_aside_the_context_lacks() -> None:
    aside = "Solar panels face south."
    assert distraction_words("Do solar pumps need checks?", aside, CTX) == ["solar"]
    assert distraction_words("Does the pump need checks?", aside, CTX) == []


def test_the_mix_of_the_issue_is_exact_per_type_and_each_record_complete(
    serve, tmp_path: Path
) -> None:
    server = serve()
    mix = {"simple": 0.5, "multi_hop": 0.2, "out_of_scope": 0.2, "double": 0.1}
    assert type_counts(mix, 50) == {"simple": 25, "multi_hop": 10, "double": 5, "out_of_scope": 10}
    with synthesizer(mix) as synth:
        dataset = synth.generate_goldens_from_docs(corpus(tmp_path), num_goldens=50)
    kinds = Counter(g.metadata["question_type"] for g in dataset)
    assert kinds == {"simple": 25, "multi_hop": 10, "out_of_scope": 10, "double": 5}
    assert dataset.shortfall is None
    for golden in dataset:
        kind = golden.metadata["question_type"]
        assert golden.input and golden.expected_output
        if kind == "out_of_scope":
            assert golden.metadata["tests"] == "refusal"
            assert golden.context == [] and golden.context_ids == []
            assert golden.expected_output == DEFAULT_REFUSAL
            assert golden.metadata[NEAR_MISS_KEY] and golden.metadata[TOPIC_KEY]
            assert set(golden.metadata[TOPIC_KEY]) <= set(golden.metadata[NEAR_MISS_KEY])
        else:
            assert golden.context and golden.context_ids
        if kind == "multi_hop":
            assert len(golden.metadata["hops"]) >= 2
    checks = [r.prompt for r in server.requests_to("chat") if "check whether documents" in r.prompt]
    assert checks  # every out-of-scope question went to the critic with its near chunks
    per_type = dataset.metadata["question_types"]
    assert per_type["out_of_scope"]["asked"] == per_type["out_of_scope"]["delivered"] == 10


def test_an_out_of_scope_question_the_model_makes_answerable_is_dropped(
    serve, tmp_path: Path
) -> None:
    """The generator writes in-scope questions for every other out-of-scope request: the critic,
    shown each question's best chunks, finds those answered; the run tops up to exactly N."""
    asked = {"n": 0}

    def half_answerable(request: dict) -> object:
        messages = request.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages if m.get("role") != "system")
        if "admits what its documents do not say" in prompt:
            asked["n"] += 1
            if asked["n"] % 2:  # what a model that ignores the recipe writes: answered questions
                plain = prompt.replace(
                    "whether an AI system admits what its documents do not say", "an AI system"
                )
                questions = synth_replies._inputs(plain)["inputs"]
                return json.dumps({"inputs": [{"fact": q, "input": q} for q in questions]})
        return synth_replies.reply(request)

    serve(half_answerable)
    with synthesizer({"out_of_scope": 1.0}) as synth:
        dataset = synth.generate_goldens_from_docs(corpus(tmp_path), num_goldens=6)
        manifest = synth.manifest
    assert len(dataset) == 6 and all(g.context == [] for g in dataset)
    dropped = {row["stage"]: row["dropped"] for row in manifest["stages"]}
    assert dropped["scope"].get(ANSWERABLE, 0) > 0
    assert "filter" not in dropped and "expected" not in dropped  # the check is in their place
    rejects = (Path(manifest["run_dir"]) / "rejects.jsonl").read_text(encoding="utf-8")
    assert '"answerable"' in rejects and "the critic found it answered in" in rejects


def test_a_refusal_text_of_ones_own_is_the_expected_output(serve, tmp_path: Path) -> None:
    serve()
    refusal = "Sorry, our manuals do not say."
    with synthesizer({"out_of_scope": 1.0}, refusal_text=refusal) as synth:
        dataset = synth.generate_goldens_from_docs(corpus(tmp_path, 6), num_goldens=2)
    assert [g.expected_output for g in dataset] == [refusal, refusal]


def test_distracting_questions_carry_a_detail_of_another_chunk(serve, tmp_path: Path) -> None:
    server = serve()
    with synthesizer({"simple": 0.5, "distracting": 0.5}) as synth:
        dataset = synth.generate_goldens_from_docs(corpus(tmp_path, 8), num_goldens=6)
    distracting = [g for g in dataset if g.metadata["question_type"] == "distracting"]
    assert len(distracting) == 3 and len(dataset) == 6
    for golden in distracting:
        assert golden.metadata["tests"] == "retriever"
        assert golden.metadata[DISTRACTOR_KEY] not in golden.context_ids
    expected = [
        r.prompt for r in server.requests_to("chat") if "do not use or repeat it" in r.prompt
    ]
    assert expected  # the expected-output step was told to ignore the detail


def test_a_model_that_ignores_the_aside_makes_no_distracting_golden(serve, tmp_path: Path) -> None:
    def no_aside(request: dict) -> object:
        for message in request.get("messages") or []:
            content = str(message.get("content", ""))
            message["content"] = re.sub(r"<aside>.*?</aside>", "", content, flags=re.DOTALL)
        return synth_replies.reply(request)

    serve(no_aside)
    with synthesizer({"distracting": 1.0}, max_goldens_per_context=1) as synth:
        with pytest.warns(UserWarning):
            dataset = synth.generate_goldens_from_docs(corpus(tmp_path, 3), num_goldens=2)
        manifest = synth.manifest
    assert len(dataset) == 0
    dropped = {row["stage"]: row["dropped"] for row in manifest["stages"]}
    assert dropped["inputs"].get(NO_DISTRACTION, 0) > 0
    assert NO_DISTRACTOR not in dropped["inputs"]


def test_types_that_search_a_corpus_need_one(serve) -> None:
    serve()
    styling = StylingConfig(scenario="support chat", task="answer", input_format="a question")
    with synthesizer({"out_of_scope": 1.0}) as synth:
        synth.styling_config = styling
        with pytest.raises(ConfigError, match="out_of_scope questions are made from documents"):
            synth.generate_goldens_from_scratch(num_goldens=2)


def test_a_mixed_run_in_a_named_run_directory_keeps_a_folder_per_type(
    serve, tmp_path: Path
) -> None:
    serve()
    run_dir = tmp_path / "run"
    docs = corpus(tmp_path, 6)
    with synthesizer({"simple": 0.5, "out_of_scope": 0.5}) as synth:
        synth.run_dir = run_dir
        first = synth.generate_goldens_from_docs(docs, num_goldens=4)
        again = synth.generate_goldens_from_docs(docs, num_goldens=4)  # each type replays
    assert sorted(p.name for p in run_dir.iterdir()) == ["out_of_scope", "simple"]
    assert [g.input for g in again] == [g.input for g in first]
    for kind, tests in (("simple", "generator"), ("out_of_scope", "refusal")):
        trust = json.loads((run_dir / kind / "manifest.json").read_text())["trust"]
        assert trust["per_question_type"] == {kind: 2}  # each type's own manifest counts it
        assert trust["per_component"] == {tests: 2}


class FoundChunks:
    """A corpus search that finds given chunks for every question, and records what it got."""

    def __init__(self, found: list[tuple[str, str]]) -> None:
        self.found, self.asked = found, []

    async def nearest(self, queries, k, exclude=None, vectors=None):
        self.asked.append((list(queries), k, vectors))
        return [list(self.found) for _ in queries]


def scope_critic(answered: set[str], prompts: list[str]):
    """A critic that finds the questions in ``answered`` answered, numbering its verdicts."""

    def reply(prompt: str, system: str | None = None) -> str:
        prompts.append(prompt)
        questions = re.findall(r"<input>\n(.*?)\n</input>", prompt, re.DOTALL)
        verdicts = [
            {"index": i, "answered": q in answered, "reason": f"reason {i}"}
            for i, q in enumerate(questions, start=1)
        ]
        return json.dumps({"verdicts": verdicts})

    return FunctionModel(reply, name="critic")


def test_the_scope_check_shows_each_question_its_own_and_its_nearest_chunks() -> None:
    drafts = [Draft(id=f"d{i}", input=q, context=CTX) for i, q in enumerate(["Who?", "Why?"])]
    search = FoundChunks([("b#1", "Heat pumps hum."), ("a#0", "duplicate of the context")])
    prompts: list[str] = []
    step = out_of_scope.ScopeStep(
        scope_critic({"Why?"}, prompts), search, default_prompts(), "No idea.", HashEmbedder(8)
    )
    asyncio.run(step.run(drafts, Source("k")))  # in this thread, where mutants are seen
    kept, answerable = drafts
    assert kept.kept and kept.expected_output == "No idea."
    assert kept.metadata[NEAR_MISS_KEY] == ["a#0", "b#1"]  # its context's, then the found ones
    assert kept.metadata["scope_reason"] == "reason 1"
    assert not answerable.kept and answerable.drop_reason == ANSWERABLE
    assert answerable.dropped_at == "scope" and answerable.expected_output is None
    assert answerable.drop_detail == "the critic found it answered in a#0, b#1: reason 2"
    [(questions, k, vectors)] = search.asked
    assert questions == ["Who?", "Why?"] and k == out_of_scope.NEAREST
    assert vectors is not None and len(vectors) == 2  # the questions, embedded for the cosine half
    [prompt] = prompts
    assert prompt.count("Heat pumps hum.") == 2 and prompt.count("The pump needs three") == 2
    assert "duplicate of the context" not in prompt


def test_without_a_refusal_or_a_search_the_check_still_decides() -> None:
    drafts = [Draft(id="d", input="Who?", context=CTX), Draft(id="x", input="Gone?", context=CTX)]
    drafts[1].drop("filter", "earlier")
    prompts: list[str] = []
    step = out_of_scope.ScopeStep(scope_critic(set(), prompts), None, default_prompts(), None)
    asyncio.run(step.run(drafts, Source("k")))
    assert drafts[0].kept and drafts[0].expected_output is None
    assert drafts[0].metadata[NEAR_MISS_KEY] == ["a#0"]
    assert "Gone?" not in prompts[0] and drafts[1].drop_reason == "earlier"


def test_an_out_of_scope_golden_loses_its_context_and_keeps_where_it_came_from() -> None:
    golden = Golden(input="Who?", context=["x", "y"], context_ids=["a#0", "a#1"])
    out_of_scope.unscoped(golden)
    assert golden.context == [] and golden.context_ids == []
    assert golden.metadata[TOPIC_KEY] == ["a#0", "a#1"]
    out_of_scope.unscoped(golden)  # again: what it came from stays
    assert golden.metadata[TOPIC_KEY] == ["a#0", "a#1"]
    bare = Golden(input="Who?", context_ids=["a#0"])
    out_of_scope.unscoped(bare)
    assert bare.metadata[TOPIC_KEY] == ["a#0"]
