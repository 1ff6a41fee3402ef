"""Goldens with measured evidence, end to end on sample_docs: citations that point at real spans,
ungrounded answers replaced to keep exactly N, difficulty measured without a model request, and
the max_easy_share gate."""

from __future__ import annotations

import json
import re
from pathlib import Path

from synth_replies import Replies, answer

from synth import FunctionModel, Synthesizer
from synth.generate.citations import SourceChunk, locate

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_docs"
ITEM = re.compile(r'<input index="(\d+)">\n(.*?)\n</input>', re.DOTALL)


def synthesizer(model, **kw) -> Synthesizer:
    kw.setdefault("embedder", "hash")
    return Synthesizer(FunctionModel(model, name="replies"), **kw)


def rows(manifest: dict) -> dict[str, dict]:
    return {r["stage"]: r for r in manifest["stages"]}


def test_every_citation_of_a_run_points_at_a_real_span_of_its_context() -> None:
    synth = synthesizer(Replies(), seed=5)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=12)
    assert len(dataset) == 12
    cited = 0
    for golden in dataset:
        grounding = golden.metadata["grounding"]
        assert grounding["all_found"] and grounding["score"] >= 0.5
        for citation in golden.metadata["citations"]:
            chunk = golden.context[golden.context_ids.index(citation["chunk_id"])]
            span = chunk[citation["start"] : citation["end"]]
            # the span is the quote, found again in that chunk alone
            again = locate(citation["quote"], [SourceChunk(chunk_id="x", text=chunk)])
            assert again is not None and chunk[again.start : again.end] == span
            assert " ".join(span.split()) == " ".join(citation["quote"].split())
            cited += 1
    assert cited >= 12


def inventing(share_of_inputs: float):
    """Answers like Replies, but for some inputs (fixed by their text) quotes that are not in the
    context, every time it is asked."""
    import hashlib

    def invents(question: str) -> bool:
        return int(hashlib.sha256(question.encode()).hexdigest()[:8], 16) / 2**32 < share_of_inputs

    def reply(prompt: str, system: str | None) -> str:
        text = answer(prompt, system)
        if "You write the ideal answers" not in prompt:
            return text
        reply = json.loads(text)
        questions = dict(ITEM.findall(prompt))
        for entry in reply["outputs"]:
            if invents(questions[str(entry["index"])]):
                entry["quotes"] = ["The warranty covers accidental damage for ten years."]
                entry["expected_output"] = "The warranty covers accidental damage for ten years."
        return json.dumps(reply)

    return reply


def test_a_model_that_invents_quotes_gets_ungrounded_drops_and_still_exactly_n() -> None:
    synth = synthesizer(inventing(0.4), seed=2)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=16)
    assert len(dataset) == 16
    expected_row = rows(synth.manifest)["expected"]
    assert expected_row["dropped"].get("ungrounded", 0) > 0
    for golden in dataset:  # none of the kept ones rests on the invented quote
        assert all("ten years" not in c["quote"] for c in golden.metadata["citations"])
        assert golden.metadata["grounding"]["score"] >= 0.5
    rejects = [
        json.loads(line)
        for line in Path(synth.last_run_dir, "rejects.jsonl").read_text().splitlines()
    ]
    ungrounded = [r for r in rejects if r.get("reason") == "ungrounded"]
    assert len(ungrounded) == expected_row["dropped"]["ungrounded"]
    assert all("is not in the context" in r["detail"] for r in ungrounded)


def test_difficulty_is_measured_for_every_golden_without_a_model_request(monkeypatch) -> None:
    replies = Replies()
    synth = synthesizer(replies, seed=4, cache=None)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    chunks = None
    for golden in dataset:
        difficulty = golden.metadata["difficulty"]
        assert difficulty["label"] in {"easy", "medium", "hard"}
        assert 1 <= difficulty["bm25_rank"] <= difficulty["chunks"]
        assert 1 <= difficulty["dense_rank"] <= difficulty["chunks"]
        assert 0.0 <= difficulty["overlap"] <= 1.0
        chunks = chunks or difficulty["chunks"]
        assert difficulty["chunks"] == chunks  # one index, over the run's chunks
    measured = len(replies.prompts)

    from synth.run import difficulty as meter

    async def nothing(self, drafts, vectors) -> None:
        return None

    monkeypatch.setattr(meter.DifficultyMeter, "measure", nothing)
    again = Replies()
    synthesizer(again, seed=4, run_dir="unmeasured", cache=None).generate_goldens_from_docs(
        SAMPLE, num_goldens=10
    )
    assert len(again.prompts) == measured  # the measurement asked the model nothing


def test_max_easy_share_keeps_at_most_that_share_of_easy_goldens_and_still_n() -> None:
    free = synthesizer(Replies(), seed=6)
    ungated = free.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    easy = sum(g.metadata["difficulty"]["label"] == "easy" for g in ungated)
    assert easy > 3  # the scripted questions are built from their chunk's own sentences
    gated = synthesizer(Replies(), seed=6, max_easy_share=0.3, run_dir="gated")
    dataset = gated.generate_goldens_from_docs(SAMPLE, num_goldens=10)
    assert len(dataset) == 10
    assert sum(g.metadata["difficulty"]["label"] == "easy" for g in dataset) <= 3
    dropped = rows(gated.manifest)["dedup"]["dropped"]
    assert dropped.get("too_easy", 0) >= easy - 3


CONTEXTS = [
    ["The HB-10 battery stores 10 kWh and charges from solar panels during the day."],
    [
        "Firmware 3.4 adds dynamic tariffs in selected regions.",
        "Dynamic tariffs read hourly prices from the supplier.",
    ],
]


def test_goldens_from_given_contexts_are_measured_by_keyword_search_alone() -> None:
    synth = synthesizer(Replies(), cache=None)
    dataset = synth.generate_goldens_from_contexts(CONTEXTS)
    assert len(dataset) == 4
    for golden in dataset:
        difficulty = golden.metadata["difficulty"]
        # the given texts were never embedded: no dense rank, BM25 over the 3 given chunks
        assert difficulty["dense_rank"] is None and difficulty["chunks"] == 3
        assert 1 <= difficulty["bm25_rank"] <= 3
        assert golden.metadata["grounding"]["all_found"]


def test_goldens_from_scratch_carry_no_citations_and_no_difficulty() -> None:
    from synth.generate.config import StylingConfig

    styling = StylingConfig(
        scenario="Owners of a home battery ask its support chatbot",
        task="answer support questions",
        input_format="a short chat message",
    )
    made = synthesizer(Replies(), styling_config=styling).generate_goldens_from_scratch(3)
    assert len(made) == 3
    for golden in made:
        assert golden.expected_output
        assert not {"citations", "grounding", "difficulty"} & set(golden.metadata)


def test_inputs_embedded_by_another_embedder_than_the_chunks_get_no_dense_rank() -> None:
    from synth.contexts.config import ContextConstructionConfig

    other = ContextConstructionConfig(embedder="hash:64")  # the chunks; inputs use "hash"
    synth = synthesizer(Replies(), context_construction_config=other, cache=None)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=4)
    assert len(dataset) == 4
    assert all(g.metadata["difficulty"]["dense_rank"] is None for g in dataset)
    assert all(g.metadata["difficulty"]["bm25_rank"] >= 1 for g in dataset)


def test_the_manifest_adds_up_the_evidence_of_the_goldens() -> None:
    synth = synthesizer(Replies(), seed=7)
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=8)
    trust = synth.manifest["trust"]
    assert trust["goldens"] == 8 and trust["grounded"] == 8 and trust["grounding_rate"] == 1.0
    assert trust["cited"] == 8 and trust["citation_rate"] == 1.0
    labels = [g.metadata["difficulty"]["label"] for g in dataset]
    assert sum(trust["per_difficulty"].values()) == 8
    assert all(trust["per_difficulty"].get(label) == labels.count(label) for label in set(labels))
    assert sum(trust["per_file"].values()) >= 8


def test_a_model_that_never_reads_the_context_gets_no_grounded_golden_and_the_run_says_why() -> (
    None
):
    import fake_openai
    import pytest

    from synth.errors import ShortfallWarning

    with fake_openai.FakeOpenAI(mode="generic") as server:  # answers from the JSON schema alone
        synth = Synthesizer("openai:fake-model", base_url=server.url, embedder="hash", cache=None)
        with synth, pytest.warns(ShortfallWarning, match="dropped at expected: ungrounded"):
            dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=2)
    assert len(dataset) == 0
    assert synth.manifest["status"] == "partial"
    assert "dropped at expected: ungrounded" in synth.manifest["shortfall"][0]
