"""Conversational goldens end to end: the real openai SDK over HTTP to the fake server.

Exact N with the top-up, standalone follow-ups dropped, resume after an interrupted run, whole
conversations deduplicated, a model that knows nothing of synth's prompts, and scoring a system's
answer to the final turn given the earlier ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fake_openai
import pytest
import synth_replies

from synth import ConversationalGolden, Dataset, Synthesizer
from synth.data import Context
from synth.errors import AuthenticationError, ConfigError, ShortfallWarning
from synth.evaluate.answers import evaluate_answers
from synth.generate.base import Source
from synth.generate.config import StylingConfig
from synth.generate.conversation import ConversationConfig, ConversationStep
from synth.generate.follow_ups import STANDALONE, FollowUpStep, follow_ups
from synth.llm.base import FunctionModel, run_sync
from synth.stage.templates import default_prompts

SAMPLE = str(Path(__file__).resolve().parent.parent / "sample_docs")
#: a 401 as the API sends it when it refuses a key
REFUSED = {"error": {"message": "incorrect API key", "type": "invalid_api_key", "code": None}}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversations-not-a-real-key")
        yield fake


def synthesizer(url: str, tmp_path: Path, **kw: Any) -> Synthesizer:
    kw.setdefault("run_dir", tmp_path / "run")
    return Synthesizer(
        "openai:fake-model",
        base_url=url,
        embedder="hash",
        cache=None,
        store_path=tmp_path / "chroma",
        **kw,
    )


def stage(manifest: dict[str, Any], name: str) -> dict[str, Any]:
    return next(row for row in manifest["stages"] if row["stage"] == name)


def test_exactly_n_conversations_each_complete_with_provenance(server, tmp_path: Path) -> None:
    with synthesizer(server.url, tmp_path, seed=5) as synth:
        dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=5)
        manifest = synth.manifest
    assert len(dataset) == 5 and dataset.shortfall is None
    assert dataset.metadata["mode"] == "conversations_docs"
    assert manifest["config"]["conversation"] == {"max_turns": 3}
    for golden in dataset:
        assert isinstance(golden, ConversationalGolden)
        assert golden.scenario and golden.expected_outcome and golden.user_description
        users = [t for t in golden.turns if t.role == "user"]
        assert 2 <= len(users) <= 3 and golden.turns[-1].role == "assistant"
        for turn in golden.turns[1::2]:  # every assistant turn cites the context
            assert turn.metadata["citations"] and turn.metadata["grounding"]["score"] >= 0.5
        assert [v["standalone"] for v in golden.metadata["follow_ups"]] == [False] * (
            len(users) - 1
        )
        assert golden.metadata["citations"] == golden.turns[-1].metadata["citations"]
        assert golden.metadata["seed"] == 5 and golden.metadata["run_id"] == manifest["run_id"]
        assert golden.metadata["models"]["generator"]["model"] == "fake-model"
        assert golden.context and golden.context_ids and golden.source_files
    # every stage counted, the cost accounted as for single-turn goldens
    assert stage(manifest, "conversation")["requests"] >= 1
    assert stage(manifest, "follow_ups")["requests"] >= 1
    assert manifest["requests_per_golden"] == round(manifest["totals"]["requests"] / 5, 3)
    for name in ("d.json", "d.jsonl", "d.csv", "d.parquet"):
        assert Dataset.load(dataset.save(tmp_path / name)) == dataset


def test_standalone_follow_ups_are_dropped_and_topped_up(
    server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SYNTH_REPLIES_STANDALONE", "0.5")
    with synthesizer(server.url, tmp_path) as synth:
        dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=4)
        manifest = synth.manifest
        run_dir = synth.last_run_dir
    assert len(dataset) == 4
    dropped = stage(manifest, "follow_ups")["dropped"]
    assert dropped.get(STANDALONE, 0) > 0
    assert all(not v["standalone"] for g in dataset for v in g.metadata["follow_ups"])
    assert run_dir is not None
    rejects = [json.loads(line) for line in (run_dir / "rejects.jsonl").read_text().splitlines()]
    reasons = [r for r in rejects if r.get("reason") == STANDALONE]
    # every drop the manifest counts is journaled; the journal may hold more: a spare whose
    # follow-ups were judged and then cancelled once the run had its goldens is journaled as its
    # step ends, but its drafts are not among those the manifest's rows are counted from (14
    # against 12 once in a fresh-clone CI run)
    assert len(reasons) >= dropped[STANDALONE]
    assert "can be understood alone" in json.dumps(reasons[0])


def test_an_interrupted_run_resumes_without_asking_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversations-not-a-real-key")
    journal = tmp_path / "run"

    def refused_once_journaled(request: dict[str, Any]) -> str | fake_openai.Reply:
        # the key is refused from the moment a first conversation is journaled: the run stops
        # with part of its work kept, whatever order its requests went out in
        if any(p.stat().st_size for p in journal.rglob("conversation.jsonl")):
            return fake_openai.Reply(status=401, body=REFUSED)
        return synth_replies.reply(request)

    with fake_openai.FakeOpenAI(reply=refused_once_journaled) as fake:
        port = fake.port  # the rerun's server takes the same address: the run key holds it
        with synthesizer(fake.url, tmp_path) as synth:
            with pytest.raises(AuthenticationError):
                synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=6)
            run_dir = synth.last_run_dir
        answered = {
            r.prompt
            for r in fake.requests_to("chat")
            if "You write conversations" in r.prompt and r.status == 200
        }
    assert run_dir is not None
    journaled = (run_dir / "conversation.jsonl").read_text().splitlines()
    assert journaled  # some conversations were written before the key was refused
    with fake_openai.FakeOpenAI(reply=synth_replies.reply, port=port) as fake:
        with synthesizer(fake.url, tmp_path) as synth:
            dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=6)
            manifest = synth.manifest
        asked = [r for r in fake.requests_to("chat") if "You write conversations" in r.prompt]
    assert stage(manifest, "conversation")["items_in"] >= 3
    with fake_openai.FakeOpenAI(reply=synth_replies.reply) as fake:
        with synthesizer(fake.url, tmp_path, run_dir=tmp_path / "fresh") as synth:
            fresh = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=6)
        written = [r for r in fake.requests_to("chat") if "You write conversations" in r.prompt]
    # the journaled ones were not asked again (each was answered in the first run), the others were
    assert len(answered) >= len(journaled)
    assert len({r.prompt for r in asked} & answered) <= len(answered) - len(journaled)
    assert len(asked) == len({r.prompt for r in asked}) and written
    assert [g.turns for g in dataset] == [g.turns for g in fresh]


def same_conversation(request: dict[str, Any]) -> str:
    """Every conversation request answered with one and the same conversation."""
    text = synth_replies.reply(request)
    if "ConversationReply" not in json.dumps(request.get("response_format") or {}):
        return text
    reply = json.loads(text)
    fixed = {
        "scenario": "A user asks about the battery.",
        "expected_outcome": "They know its capacity.",
        "user_description": "an owner",
        "exchanges": [
            {"user": "How much does the battery hold?", "assistant": "10 kWh.", "quotes": []},
            {"user": "And how long does it last?", "assistant": "Ten years.", "quotes": []},
        ],
    }
    first = reply["conversations"][0]
    reply["conversations"] = [{**first, **fixed}] + reply["conversations"][1:]
    return json.dumps(reply)


def test_identical_conversations_are_deduplicated_and_topped_up(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversations-not-a-real-key")
    with fake_openai.FakeOpenAI(reply=same_conversation) as fake:
        with synthesizer(fake.url, tmp_path, grounding_threshold=0.0) as synth:
            dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=5)
            manifest = synth.manifest
    assert len(dataset) == 5
    firsts = [g.turns[0].content for g in dataset]
    assert firsts.count("How much does the battery hold?") == 1
    assert stage(manifest, "dedup")["dropped"].get("near_duplicate", 0) >= 1


def same_opening(request: dict[str, Any]) -> str:
    """Every conversation opens with one question; the rest differs (quoted from its context)."""
    reply = json.loads(synth_replies.reply(request))
    for conversation in reply.get("conversations", []):
        conversation["exchanges"][0]["user"] = "How much does the battery hold?"
    return json.dumps(reply)


def test_conversations_that_only_open_alike_are_not_duplicates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversations-not-a-real-key")
    with fake_openai.FakeOpenAI(reply=same_opening) as fake:
        with synthesizer(fake.url, tmp_path) as synth:
            dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=4)
            manifest = synth.manifest
    assert len(dataset) == 4
    assert {g.turns[0].content for g in dataset} == {"How much does the battery hold?"}
    assert stage(manifest, "dedup")["dropped"].get("near_duplicate", 0) == 0


def test_a_model_that_does_not_know_the_prompts_falls_short_with_reasons(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversations-not-a-real-key")
    with fake_openai.FakeOpenAI(mode="generic") as fake:
        with synthesizer(fake.url, tmp_path, grounding_threshold=0.0) as synth:
            with pytest.warns(ShortfallWarning):
                dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=3)
            manifest = synth.manifest
    assert dataset.shortfall is not None and manifest["status"] == "partial"
    drops = {
        **stage(manifest, "conversation")["dropped"],
        **stage(manifest, "follow_ups")["dropped"],
    }
    assert sum(drops.values()) > 0  # each conversation it wrote was dropped, and said why
    assert any("follow_ups" in r or "conversation" in r for r in dataset.shortfall.reasons)


CTX = Context(
    id="c",
    chunk_ids=["c#0"],
    texts=["The battery holds ten kilowatt hours. It lasts for fifteen years of daily use."],
    source_files=["manual.md"],
)


def test_the_follow_up_check_sees_each_follow_up_alone() -> None:
    step = ConversationStep(
        FunctionModel(synth_replies.Replies(), name="r"),
        ConversationConfig(max_turns=2),
        2,
        StylingConfig(),
        default_prompts(),
        0,
    )
    drafts = run_sync(step.run([], Source("k", CTX)))
    assert [d.kept for d in drafts] == [True, True]
    prompts: list[str] = []

    def critic(prompt: str, system: str | None = None) -> str:
        prompts.append(prompt)
        return synth_replies.answer(prompt, system)

    checked = run_sync(
        FollowUpStep(FunctionModel(critic), default_prompts()).run(drafts, Source("k"))
    )
    assert all(d.kept for d in checked)
    (prompt,) = prompts  # one request for both conversations' follow-ups
    for draft in drafts:
        ((_, text),) = follow_ups(draft)
        assert text in prompt
        assert draft.conversation is not None
        assert draft.conversation["turns"][0]["content"] not in prompt  # shown alone


def test_a_conversation_with_one_user_turn_is_dropped_as_missing_turns() -> None:
    def short(prompt: str, system: str | None = None) -> str:
        reply = json.loads(synth_replies.answer(prompt, system))
        for conversation in reply["conversations"]:
            conversation["exchanges"] = conversation["exchanges"][:1]
        return json.dumps(reply)

    step = ConversationStep(
        FunctionModel(short), ConversationConfig(), 1, StylingConfig(), default_prompts(), 0
    )
    (draft,) = run_sync(step.run([], Source("k", CTX)))
    assert draft.drop_reason == "missing_turns" and "needs two or more" in (draft.drop_detail or "")


def test_max_turns_is_checked() -> None:
    with pytest.raises(ConfigError, match="max_turns"):
        ConversationConfig(max_turns=1)


def test_evaluate_scores_the_final_turn_given_the_earlier_ones(server, tmp_path: Path) -> None:
    with synthesizer(server.url, tmp_path) as synth:
        dataset = synth.generate_conversational_goldens_from_docs(SAMPLE, num_goldens=2)
    seen: list[tuple[str, list[dict[str, str]]]] = []

    def system(question: str, history: list[dict[str, str]]) -> str:
        seen.append((question, history))
        golden = next(g for g in dataset if g.input == question)
        return golden.expected_output or ""

    judged: list[str] = []

    def judge(prompt: str, system: str | None = None) -> str:
        judged.append(prompt)
        return json.dumps({"score": 5, "reason": "fine"})

    report = evaluate_answers(system, dataset, judges={"j": judge}, metrics=["answer_relevance"])
    for golden, (question, history) in zip(dataset, seen, strict=True):
        assert isinstance(golden, ConversationalGolden) and question == golden.input
        assert history == [{"role": t.role, "content": t.content} for t in golden.history]
    assert all(row.scores["token_f1"] == 1.0 for row in report.items)
    first = dataset[0]
    assert isinstance(first, ConversationalGolden)
    assert any(first.turns[0].content in p and first.input in p for p in judged)
