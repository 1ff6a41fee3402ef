"""The one per-stage record: counted from the drafts a run used, as the run's manifest counts them."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from synth.errors import ModelError, RateLimitError
from synth.generate.draft import Draft
from synth.run.manifest import stage_row, stats_rows
from synth.stage.stats import StageStats, count_stages, model_error_reason

STAGES = ["inputs", "filter", "evolve", "style", "expected"]


def _draft(i: int, stage: str | None = None, reason: str = "x") -> Draft:
    draft = Draft(id=f"d{i}", input=f"q{i}?")
    if stage is not None:
        draft.drop(stage, reason)
    return draft


DRAFTS = [
    _draft(0),
    _draft(1, "inputs", "model_error:server"),
    _draft(2, "filter", "below_input_quality_threshold"),
    _draft(3, "filter", "model_error:timeout"),
    _draft(4, "evolve", "model_error:server"),
    _draft(5, "dedup", "duplicate"),
    _draft(6, "elsewhere", "odd"),  # a stage not listed counts at dedup
    _draft(7),
]


def test_records_add_up_and_chain_from_stage_to_stage() -> None:
    records = count_stages(STAGES, DRAFTS, contexts=3)
    assert [r.stage for r in records] == [*STAGES, "dedup"]
    assert (records[0].items_in, records[0].items_out) == (3, 7)
    assert records[0].dropped == {"model_error:server": 1}
    assert records[1].dropped == {"below_input_quality_threshold": 1, "model_error:timeout": 1}
    assert records[-1].dropped == {"duplicate": 1, "odd": 1}
    for before, after in zip(records[1:], records[2:], strict=False):
        assert after.items_in == before.items_out
    for record in records[1:]:  # the first takes contexts in and gives inputs out
        assert record.items_in == record.items_out + record.dropped_total
    assert records[-1].items_out == 2


def test_rows_are_the_manifests_rows() -> None:
    records = count_stages(STAGES[:2], DRAFTS, contexts=4)
    expected = [
        stage_row("inputs", 4, 7, {"model_error:server": 1}),
        stage_row("filter", 7, 5, {"below_input_quality_threshold": 1, "model_error:timeout": 1}),
        # a drop at a stage not run (evolve here) or not listed counts at dedup
        stage_row("dedup", 5, 2, {"duplicate": 1, "model_error:server": 1, "odd": 1}),
    ]
    assert [r.row() for r in records] == expected
    assert stats_rows(records) == expected


def test_usage_adds_requests_tokens_and_cost() -> None:
    record = StageStats(stage="filter", requests=1)
    record.add_usage({"requests": 2, "input_tokens": 30, "output_tokens": 5, "cost_usd": 0.25})
    record.add_usage({"requests": 1, "cost_usd": 0.5})
    summary = record.as_dict()
    assert summary["requests"] == 4 and summary["cost_usd"] == 0.75
    assert (summary["input_tokens"], summary["output_tokens"]) == (30, 5)


# ---- Each count, word for word.


def _one_draft(stage: str | None = None, reason: str | None = "x") -> Draft:
    draft = Draft(id="d", input="q")
    if stage is not None:
        draft.drop(stage, reason)  # type: ignore[arg-type]
    return draft


def test_a_new_record_counts_nothing() -> None:
    record = StageStats(stage="s")
    assert record.as_dict() == {
        "stage": "s",
        "items_in": 0,
        "items_out": 0,
        "dropped": {},
        "requests": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "notes": {},
    }
    assert record.dropped_total == 0


def test_drop_and_note_count_one_by_default_or_the_count_given() -> None:
    record = StageStats(stage="s")
    record.drop("bad")
    record.drop("bad", 3)
    record.drop("odd")
    record.note("rewritten")
    record.note("rewritten", 2)
    record.note("reasked")
    assert record.dropped == Counter({"bad": 4, "odd": 1})
    assert record.notes == Counter({"rewritten": 3, "reasked": 1})
    assert record.dropped_total == 5


def test_tally_counts_each_item_in_and_then_out_or_by_its_reason() -> None:
    record = StageStats(stage="s", items_in=1, items_out=1)
    unnamed = SimpleNamespace(kept=False, drop_reason=None)  # dropped, with no reason given
    record.tally(
        [_one_draft(), _one_draft("s", "bad"), _one_draft(), unnamed, _one_draft("s", "bad")]
    )
    assert (record.items_in, record.items_out) == (6, 3)
    assert record.dropped == Counter({"bad": 2, "unknown": 1})


def test_merge_adds_the_item_drop_request_token_cost_and_note_counts() -> None:
    record = StageStats(
        stage="s", items_in=2, items_out=1, requests=3, input_tokens=10, cost_usd=0.25
    )
    record.drop("bad")
    record.note("n")
    other = StageStats(
        stage="t",
        items_in=5,
        items_out=4,
        requests=7,
        input_tokens=5,
        output_tokens=8,
        cost_usd=0.5,
    )
    other.drop("bad", 2)
    other.drop("odd")
    other.note("n", 4)
    other.note("m")
    record.merge(other)
    assert (record.stage, record.items_in, record.items_out, record.requests) == ("s", 7, 5, 10)
    assert record.dropped == Counter({"bad": 3, "odd": 1})
    assert record.notes == Counter({"n": 5, "m": 1})
    assert (record.input_tokens, record.output_tokens, record.cost_usd) == (15, 8, 0.75)


def test_add_usage_adds_each_key_as_its_type_and_missing_keys_as_zero() -> None:
    record = StageStats(stage="s", requests=1, input_tokens=2, output_tokens=3, cost_usd=0.5)
    record.add_usage({"requests": 2.0, "input_tokens": 10.0, "output_tokens": 20.0, "cost_usd": 1})
    assert (record.requests, record.input_tokens, record.output_tokens) == (3, 12, 23)
    assert record.cost_usd == 1.5
    assert all(type(v) is int for v in (record.requests, record.input_tokens, record.output_tokens))
    assert type(record.cost_usd) is float
    record.add_usage({})
    assert (record.requests, record.input_tokens, record.output_tokens) == (3, 12, 23)
    assert record.cost_usd == 1.5


def test_row_and_summary_sort_drops_and_notes_by_name() -> None:
    record = StageStats(stage="f", items_in=4, items_out=1, requests=2, cost_usd=0.25)
    record.add_usage({"input_tokens": 7, "output_tokens": 8})
    record.drop("zeta")
    record.drop("alpha", 2)
    record.note("z")
    record.note("a", 3)
    assert record.row() == {
        "stage": "f",
        "items_in": 4,
        "items_out": 1,
        "dropped": {"alpha": 2, "zeta": 1},
    }
    assert list(record.row()["dropped"]) == ["alpha", "zeta"]
    summary = record.as_dict()
    assert summary == {
        "stage": "f",
        "items_in": 4,
        "items_out": 1,
        "dropped": {"alpha": 2, "zeta": 1},
        "requests": 2,
        "input_tokens": 7,
        "output_tokens": 8,
        "cost_usd": 0.25,
        "notes": {"a": 3, "z": 1},
    }
    assert list(summary["notes"]) == ["a", "z"] and type(summary["notes"]) is dict


def test_count_stages_with_one_step_counts_every_later_drop_at_the_final_stage() -> None:
    drafts = [
        _one_draft(),
        _one_draft("inputs", None),
        _one_draft("evolve", None),
        _one_draft("mine", "dup"),
    ]
    made, final = count_stages(["inputs"], drafts, contexts=2, final_stage="mine")
    assert (made.stage, made.items_in, made.items_out) == ("inputs", 2, 3)
    assert made.dropped == Counter({"unknown": 1})
    assert (final.stage, final.items_in, final.items_out) == ("mine", 3, 1)
    assert final.dropped == Counter({"unknown": 1, "dup": 1})


def test_count_stages_chains_each_step_from_the_one_before() -> None:
    drafts = [
        _one_draft(),
        _one_draft("b", "r1"),
        _one_draft("b", "r2"),
        _one_draft("c", "r3"),
        _one_draft(),
    ]
    records = count_stages(["a", "b", "c"], drafts, contexts=1)
    assert [(r.stage, r.items_in, r.items_out, dict(r.dropped)) for r in records] == [
        ("a", 1, 5, {}),
        ("b", 5, 3, {"r1": 1, "r2": 1}),
        ("c", 3, 2, {"r3": 1}),
        ("dedup", 2, 2, {}),
    ]


def test_model_error_reason_uses_the_kind_or_else_the_class_name() -> None:
    assert model_error_reason(RateLimitError("slow")) == "model_error:rate_limit"
    assert model_error_reason(ModelError("x")) == "model_error:model"
    assert model_error_reason(ValueError("x")) == "model_error:ValueError"
