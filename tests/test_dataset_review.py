"""The review record's functions (synth/dataset/review.py) to the letter: the whole record a
decision and an edit write, what each keeps of the record before, the goldens given left alone,
every refusal's message, and the status lists the review page and the CLI offer.
tests/test_review_record.py has the behaviours; this file pins what they left loose."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta, timezone

import pytest

from synth import ConfigError, Dataset, Golden
from synth.dataset import review
from synth.dataset.review import counts, decide, edit, select, stamp, status_of

NOW = datetime(2026, 12, 1, 23, 41, 3, 987654, tzinfo=UTC)
TIME = "2026-12-01T23:41:03Z"


def golden(**metadata: object) -> Golden:
    return Golden(input="q", expected_output="a", metadata=dict(metadata))


def test_the_statuses_filters_fields_and_reasons_offered() -> None:
    assert review.STATUSES == ("accepted", "rejected", "pending")
    assert review.STATUS_FILTERS == ("accepted", "rejected", "pending", "all")
    assert review.EDITABLE_FIELDS == ("input", "expected_output")
    assert review.REJECT_REASONS == (
        "wrong answer",
        "not answerable from context",
        "ambiguous",
        "trivial",
        "duplicate",
        "bad language",
    )


def test_the_status_is_the_records_own_when_it_is_one_of_the_three() -> None:
    assert status_of(golden(review={"status": "rejected"})) == "rejected"
    assert status_of(golden(review={"status": "accepted"})) == "accepted"
    assert status_of(golden(review={"status": "all"})) == "pending"
    assert status_of(golden(review=["status"])) == "pending"


def test_a_decision_keeps_an_earlier_edits_original_and_strips_the_reviewer() -> None:
    before = golden(review={"status": "rejected", "reason": "x", "original": {"input": "old"}})
    decided = decide(before, "accepted", reviewer="  ann ", now=NOW)
    assert decided.metadata["review"] == {
        "status": "accepted",
        "reason": None,
        "reviewer": "ann",
        "time": TIME,
        "original": {"input": "old"},
    }


def test_a_decision_copies_the_metadata_deeply() -> None:
    before = golden(nested={"list": [1]}, review={"status": "pending"})
    decided = decide(before, "rejected", reviewer="ann", now=NOW)
    assert decided.metadata["review"]["reason"] is None
    decided.metadata["nested"]["list"].append(2)
    assert before.metadata == {"nested": {"list": [1]}, "review": {"status": "pending"}}


@pytest.mark.parametrize(
    ("status", "reason", "message"),
    [
        ("maybe", None, "review status must be one of accepted, rejected, pending; got 'maybe'"),
        ("pending", "why", "a reason is only recorded for a rejection, not for 'pending'"),
        ("rejected", " \t", "a rejection reason must not be blank (leave it out instead)"),
    ],
)
def test_a_bad_decision_is_refused_saying_why(status: str, reason: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        decide(golden(), status, reason=reason, reviewer="ann")
    assert str(error.value) == message


@pytest.mark.parametrize("reviewer", ["", "  ", None, 3])
def test_a_reviewer_that_is_not_a_name_is_refused(reviewer: object) -> None:
    with pytest.raises(ConfigError) as error:
        decide(golden(), "accepted", reviewer=reviewer)  # type: ignore[arg-type]
    assert str(error.value) == "the reviewer's name must not be empty"


def test_an_edit_of_a_pending_golden_writes_the_whole_record() -> None:
    edited = edit(golden(), expected_output="b", reviewer=" bob ", now=NOW)
    assert (edited.input, edited.expected_output) == ("q", "b")
    assert edited.metadata["review"] == {
        "status": "accepted",
        "reason": None,
        "reviewer": "bob",
        "time": TIME,
        "original": {"expected_output": "a"},
    }


def test_an_edit_keeps_a_rejections_reason_but_no_other_statuss_reason() -> None:
    rejected = golden(review={"status": "rejected", "reason": "trivial"})
    again = edit(rejected, input="q2", reviewer="ann", now=NOW)
    assert again.metadata["review"] == {
        "status": "rejected",
        "reason": "trivial",
        "reviewer": "ann",
        "time": TIME,
        "original": {"input": "q"},
    }
    odd = golden(review={"status": "accepted", "reason": "left over"})
    assert edit(odd, input="q2", reviewer="ann").metadata["review"]["reason"] is None


def test_an_edit_leaves_the_record_it_read_alone_and_keeps_each_first_original() -> None:
    record = {"status": "accepted", "original": {"input": "first"}}
    before = golden(review=record)
    edited = edit(before, input="third", expected_output="a", reviewer="ann", now=NOW)
    # the input's first original stays; the expected output did not change, so none is added
    assert edited.metadata["review"]["original"] == {"input": "first"}
    changed = edit(before, expected_output="new", reviewer="ann", now=NOW)
    assert changed.metadata["review"]["original"] == {"input": "first", "expected_output": "a"}
    assert record == {"status": "accepted", "original": {"input": "first"}}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "edit: give the new input, the new expected_output, or both"),
        ({"input": " \n"}, "edit: the input must not be empty or blank"),
        ({"input": "", "expected_output": "b"}, "edit: the input must not be empty or blank"),
    ],
)
def test_an_edit_of_nothing_or_to_a_blank_input_is_refused(
    fields: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as error:
        edit(golden(), reviewer="ann", **fields)
    assert str(error.value) == message


def test_selecting_from_goldens_gives_a_dataset_without_metadata() -> None:
    goldens = [golden(review={"status": "rejected"}), golden()]
    every = select(goldens, "all")
    assert every.goldens == goldens
    assert every.metadata == {}
    assert select(Dataset(goldens, {"seed": 1}), "pending").metadata == {"seed": 1}
    with pytest.raises(ConfigError) as error:
        select(goldens, "accepted ")
    assert str(error.value) == (
        "status must be one of accepted, rejected, pending, all; got 'accepted '"
    )


def test_counts_name_every_status_in_order_even_at_zero() -> None:
    assert list(counts([])) == ["accepted", "rejected", "pending"]
    assert counts([]) == {"accepted": 0, "rejected": 0, "pending": 0}
    two = [golden(review={"status": "rejected"})] * 2
    assert counts(two) == {"accepted": 0, "rejected": 2, "pending": 0}


def test_the_time_is_now_in_utc_by_default_and_a_naive_time_is_refused() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    stamped = datetime.strptime(stamp(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    after = datetime.now(UTC)
    assert before <= stamped <= after
    minus_five = timezone(timedelta(hours=-5))
    assert stamp(datetime(2026, 12, 31, 22, 0, 0, tzinfo=minus_five)) == "2027-01-01T03:00:00Z"
    with pytest.raises(ConfigError) as error:
        stamp(datetime(2026, 1, 2))
    assert str(error.value) == "review time must be timezone-aware (a naive time has no UTC)"


def test_the_time_is_in_utc_on_a_machine_in_another_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "JST-9")  # a POSIX zone: nine hours east, no tz database needed
    time.tzset()
    try:
        assert stamp(NOW) == TIME
        eastern = timezone(timedelta(hours=9))
        assert stamp(datetime(2026, 12, 2, 8, 41, 3, tzinfo=eastern)) == TIME
    finally:
        monkeypatch.undo()
        time.tzset()
