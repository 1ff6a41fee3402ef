"""The review record in golden.metadata["review"]: decide, edit, status, select, golden_key."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from synth import ConfigError, Dataset, Golden
from synth.dataset.review import (
    REJECT_REASONS,
    counts,
    decide,
    edit,
    golden_key,
    select,
    stamp,
    status_of,
)

NOW = datetime(2026, 12, 1, 23, 41, 3, 987654, tzinfo=UTC)


def _golden(i: int = 0, **metadata: object) -> Golden:
    return Golden(
        input=f"q{i}", expected_output=f"a{i}", context=[f"ctx {i}"], metadata=dict(metadata)
    )


def test_a_golden_without_a_record_is_pending() -> None:
    assert status_of(_golden()) == "pending"
    assert status_of(_golden(review="junk")) == "pending"
    assert status_of(_golden(review={"status": "maybe"})) == "pending"


def test_decide_writes_the_whole_record_and_leaves_the_input_golden_alone() -> None:
    golden = _golden(draft_id="d0")
    rejected = decide(golden, "rejected", reason=" wrong answer ", reviewer="ann", now=NOW)
    assert rejected.metadata["review"] == {
        "status": "rejected",
        "reason": "wrong answer",
        "reviewer": "ann",
        "time": "2026-12-01T23:41:03Z",
    }
    assert rejected.metadata["draft_id"] == "d0"
    assert "review" not in golden.metadata  # a copy, not a change in place
    accepted = decide(rejected, "accepted", reviewer="bob", now=NOW)
    assert accepted.metadata["review"]["reason"] is None
    assert status_of(accepted) == "accepted"
    assert status_of(decide(accepted, "pending", reviewer="bob")) == "pending"


def test_time_is_utc_to_the_second_with_z() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert stamp(datetime(2026, 1, 2, 3, 4, 5, tzinfo=plus_two)) == "2026-01-02T01:04:05Z"
    assert stamp().endswith("Z") and len(stamp()) == len("2026-01-02T01:04:05Z")
    with pytest.raises(ConfigError, match="timezone"):
        stamp(datetime(2026, 1, 2))


@pytest.mark.parametrize(
    ("status", "reason", "match"),
    [
        ("maybe", None, "one of accepted, rejected, pending"),
        ("accepted", "wrong answer", "only recorded for a rejection"),
        ("rejected", "   ", "must not be blank"),
    ],
)
def test_decide_refuses_a_bad_decision(status: str, reason: str | None, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        decide(_golden(), status, reason=reason, reviewer="ann")


def test_decide_refuses_an_empty_reviewer() -> None:
    with pytest.raises(ConfigError, match="reviewer"):
        decide(_golden(), "accepted", reviewer=" ")


def test_an_edit_keeps_the_first_original_of_each_field() -> None:
    golden = _golden()
    once = edit(golden, expected_output="better", reviewer="ann", now=NOW)
    assert once.expected_output == "better"
    assert once.metadata["review"]["original"] == {"expected_output": "a0"}
    twice = edit(once, expected_output="best", input="q0 reworded", reviewer="ann", now=NOW)
    assert (twice.input, twice.expected_output) == ("q0 reworded", "best")
    assert twice.metadata["review"]["original"] == {"expected_output": "a0", "input": "q0"}
    decided = decide(twice, "rejected", reason="trivial", reviewer="ann", now=NOW)
    assert decided.metadata["review"]["original"] == {"expected_output": "a0", "input": "q0"}


def test_an_edit_accepts_a_pending_golden_and_keeps_a_decided_status() -> None:
    assert status_of(edit(_golden(), input="new q", reviewer="ann")) == "accepted"
    rejected = decide(_golden(), "rejected", reason="ambiguous", reviewer="ann")
    edited = edit(rejected, input="new q", reviewer="bob")
    assert edited.metadata["review"]["status"] == "rejected"
    assert edited.metadata["review"]["reason"] == "ambiguous"
    assert edited.metadata["review"]["reviewer"] == "bob"


def test_an_edit_to_the_same_text_records_no_original() -> None:
    assert "original" not in edit(_golden(), input="q0", reviewer="ann").metadata["review"]


@pytest.mark.parametrize(
    ("fields", "match"), [({}, "give the new input"), ({"input": "  "}, "must not be empty")]
)
def test_edit_refuses_nothing_or_a_blank_input(fields: dict[str, str], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        edit(_golden(), reviewer="ann", **fields)


def test_golden_key_prefers_draft_id_then_id_then_a_content_hash() -> None:
    assert golden_key(_golden(draft_id="d7", id="x")) == "d7"
    assert golden_key(_golden(id=42)) == "42"
    plain = _golden()
    assert len(golden_key(plain)) == 32
    assert golden_key(plain) != golden_key(_golden(1))
    assert golden_key(plain) != golden_key(plain.model_copy(update={"context": ["other"]}))
    # the key survives an edit of the input, so a decision still finds its golden
    assert golden_key(edit(plain, input="reworded", reviewer="ann")) == golden_key(plain)


def test_select_keeps_order_and_dataset_metadata() -> None:
    goldens = [
        decide(_golden(0), "accepted", reviewer="a"),
        _golden(1),
        decide(_golden(2), "rejected", reason="duplicate", reviewer="a"),
        decide(_golden(3), "accepted", reviewer="a"),
    ]
    dataset = Dataset(goldens, {"seed": 3})
    accepted = select(dataset, "accepted")
    assert [g.input for g in accepted] == ["q0", "q3"] and accepted.metadata == {"seed": 3}
    assert [g.input for g in select(goldens, "pending")] == ["q1"]
    assert [g.input for g in select(goldens, "rejected")] == ["q2"]
    assert select(dataset, "all") == dataset
    assert counts(goldens) == {"accepted": 2, "rejected": 1, "pending": 1}
    with pytest.raises(ConfigError, match="status must be one of"):
        select(goldens, "done")


def test_the_record_survives_every_file_format(tmp_path: Path) -> None:
    golden = edit(
        decide(_golden(), "rejected", reason="trivial", reviewer="ann"), input="x", reviewer="b"
    )
    for suffix in (".json", ".jsonl", ".csv", ".parquet"):
        path = Dataset([golden]).save(tmp_path / f"d{suffix}")
        assert Dataset.load(path)[0].metadata["review"] == golden.metadata["review"], suffix


def test_the_reason_list_is_short_and_distinct() -> None:
    assert 3 <= len(REJECT_REASONS) <= 8 and len(set(REJECT_REASONS)) == len(REJECT_REASONS)
