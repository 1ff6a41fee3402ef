"""The one per-stage record: counted from the drafts a run used, as the run's manifest counts them."""

from __future__ import annotations

from synth.generate.draft import Draft
from synth.run.manifest import stage_row, stats_rows
from synth.stage.stats import StageStats, count_stages

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
