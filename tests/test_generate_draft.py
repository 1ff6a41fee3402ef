"""Ids, drops, goldens, batches."""

from __future__ import annotations

import hashlib

from synth.data import Context, ConversationalGolden, Golden
from synth.errors import ModelError, OutputParseError
from synth.generate.draft import Draft, by_context, draft_id, drop_failed, live


def _context(cid: str = "ctx_1", quality: float | None = 0.5) -> Context:
    return Context(
        id=cid,
        chunk_ids=["b#1", "a#0", "b#1"],
        texts=["beta", "alpha", "beta again"],
        source_files=["b.txt", "a.txt", "b.txt"],
        quality=quality,
    )


def test_draft_id_hashes_the_parts_as_text_joined_by_a_control_character() -> None:
    digest = hashlib.sha256(b"ctx\x1f3").hexdigest()[:16]
    assert draft_id("ctx", 3) == "d_" + digest
    assert len(draft_id("x")) == 18
    assert draft_id("ctx", 3) != draft_id("ctx", 4)


def test_a_new_draft_is_kept_until_dropped() -> None:
    draft = Draft(id="d", input="q")
    assert draft.kept is True
    assert (draft.drop_reason, draft.dropped_at, draft.drop_detail, draft.drop_raw) == (
        None,
        None,
        None,
        None,
    )
    draft.drop("filter", "low_quality")
    assert draft.kept is False
    assert (draft.drop_reason, draft.dropped_at, draft.drop_detail, draft.drop_raw) == (
        "low_quality",
        "filter",
        None,
        None,
    )


def test_drop_keeps_detail_and_raw_reply_but_raw_is_not_dumped() -> None:
    draft = Draft(id="d", input="q")
    draft.drop("critic", "bad", detail="scored 1", raw="{oops")
    assert (draft.drop_reason, draft.dropped_at) == ("bad", "critic")
    assert (draft.drop_detail, draft.drop_raw) == ("scored 1", "{oops")
    dumped = draft.model_dump()
    assert "drop_raw" not in dumped and dumped["drop_detail"] == "scored 1"


def test_revise_keeps_each_old_input_in_history_with_extra_fields() -> None:
    draft = Draft(id="d", input="first")
    draft.revise("evolve", "second", evolution="reasoning")
    draft.revise("style", "third")
    assert draft.input == "third"
    assert draft.history == [
        {"stage": "evolve", "input": "first", "evolution": "reasoning"},
        {"stage": "style", "input": "second"},
    ]


def test_to_golden_fills_every_metadata_key_and_lets_draft_metadata_win() -> None:
    draft = Draft(
        id="d_9",
        input="What?",
        context=_context(),
        input_quality=0.25,
        evolutions=["reasoning"],
        styling={"scenario": "s"},
        persona="p",
        expected_output="That.",
        metadata={"seed": "mine", "extra": 1},
    )
    golden = draft.to_golden(models={"g": "m"}, prompt_version="v", seed=7, run_id="r")
    assert type(golden) is Golden
    assert golden.input == "What?" and golden.expected_output == "That."
    assert golden.context == ["beta", "alpha", "beta again"]
    assert golden.context_ids == ["b#1", "a#0", "b#1"]
    assert golden.source_files == ["b.txt", "a.txt"]
    assert golden.metadata == {
        "context_quality": 0.5,
        "input_quality": 0.25,
        "evolutions": ["reasoning"],
        "styling": {"scenario": "s"},
        "persona": "p",
        "models": {"g": "m"},
        "prompt_version": "v",
        "seed": "mine",
        "run_id": "r",
        "draft_id": "d_9",
        "context_id": "ctx_1",
        "extra": 1,
    }
    assert golden.metadata["evolutions"] is not draft.evolutions


def test_to_golden_without_context_or_provenance_leaves_them_empty() -> None:
    golden = Draft(id="d_0", input="Why?").to_golden()
    assert golden.context is None and golden.context_ids == [] and golden.source_files == []
    assert golden.expected_output is None
    assert golden.metadata == {
        "context_quality": None,
        "input_quality": None,
        "evolutions": [],
        "styling": None,
        "persona": None,
        "models": {},
        "prompt_version": None,
        "seed": None,
        "run_id": None,
        "draft_id": "d_0",
    }


def test_to_golden_of_a_conversation_takes_input_and_answer_from_its_turns() -> None:
    turns = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "and then?"},
        {"role": "assistant", "content": "then this"},
    ]
    draft = Draft(
        id="d_c",
        input="user: hi ...",
        context=_context(quality=None),
        expected_output="ignored",
        conversation={"scenario": "sc", "user_description": "u", "turns": turns},
    )
    golden = draft.to_golden(seed=1)
    assert type(golden) is ConversationalGolden
    assert golden.input == "and then?" and golden.expected_output == "then this"
    assert golden.scenario == "sc" and golden.user_description == "u"
    assert [t.content for t in golden.turns] == ["hi", "hello", "and then?", "then this"]
    assert golden.context_ids == ["b#1", "a#0", "b#1"] and golden.source_files == ["b.txt", "a.txt"]
    assert golden.metadata["context_id"] == "ctx_1" and golden.metadata["seed"] == 1
    assert golden.metadata["context_quality"] is None


def test_drop_failed_names_the_kind_and_keeps_message_and_raw_reply() -> None:
    draft = Draft(id="d", input="q")
    drop_failed(draft, "inputs", OutputParseError("not JSON", raw="{bad"))
    assert (draft.dropped_at, draft.drop_reason) == ("inputs", "model_error:invalid_output")
    assert (draft.drop_detail, draft.drop_raw) == ("not JSON", "{bad")


def test_drop_failed_with_no_message_or_reply_keeps_none() -> None:
    draft = Draft(id="d", input="q")
    drop_failed(draft, "evolve", ModelError())
    assert (draft.dropped_at, draft.drop_reason) == ("evolve", "model_error:model")
    assert draft.drop_detail is None and draft.drop_raw is None


def test_live_keeps_only_the_drafts_not_dropped_in_order() -> None:
    drafts = [Draft(id=str(i), input="q") for i in range(4)]
    drafts[1].drop("s", "r")
    assert [d.id for d in live(drafts)] == ["0", "2", "3"]


def test_by_context_batches_each_context_apart_in_first_seen_order() -> None:
    a, b = _context("a"), _context("b")
    drafts = [
        Draft(id="a1", input="q", context=a),
        Draft(id="n1", input="q"),
        Draft(id="b1", input="q", context=b),
        Draft(id="a2", input="q", context=a),
        Draft(id="a3", input="q", context=a),
        Draft(id="n2", input="q"),
    ]
    batches = by_context(drafts, 2)
    assert [[d.id for d in batch] for batch in batches] == [
        ["a1", "a2"],
        ["a3"],
        ["n1", "n2"],
        ["b1"],
    ]
    assert [[d.id for d in batch] for batch in by_context(drafts, 1)] == [
        ["a1"],
        ["a2"],
        ["a3"],
        ["n1"],
        ["n2"],
        ["b1"],
    ]
    assert by_context([], 3) == []
