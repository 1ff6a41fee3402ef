"""The one-rewrite stages'
shared loop (blank replies refused, failures dropped, live drafts run and tallied)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from synth.data import Context
from synth.errors import OutputParseError
from synth.generate._rewrite import nonblank_input, rewrite, run_live, run_live_batches
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.llm.factory import wrap_llm
from synth.llm.structured import parse_verdict
from synth.stage.stats import StageStats


class Rewritten(BaseModel):
    input: str


def _parse(text: str) -> str:
    reply = parse_verdict(text, Rewritten)
    return nonblank_input(reply.input, "rewritten", reply, raw=text)


def test_nonblank_input_strips_the_text_or_refuses_it_with_the_reply() -> None:
    reply = Rewritten(input="  ")
    assert nonblank_input("  Why?\n", "evolved", reply) == "Why?"
    with pytest.raises(OutputParseError) as caught:
        nonblank_input(" \n", "evolved", reply)
    assert str(caught.value) == "the evolved input is blank"
    assert caught.value.raw == '{"input":"  "}'
    with pytest.raises(OutputParseError) as given:
        nonblank_input("", "styled", reply, raw="the raw text")
    assert str(given.value) == "the styled input is blank" and given.value.raw == "the raw text"


def test_rewrite_revises_the_draft_and_keeps_the_record_in_its_history() -> None:
    llm = wrap_llm(FunctionModel(lambda prompt, system: '{"input": " Why so? "}'))
    draft = Draft(id="d", input="Why?")
    stats = StageStats(stage="evolve")
    done = run_sync(
        rewrite(draft, llm, "p", Rewritten, _parse, "evolve", stats, evolution="reasoning")
    )
    assert done is True and draft.kept and draft.input == "Why so?"
    assert draft.history == [{"stage": "evolve", "input": "Why?", "evolution": "reasoning"}]
    assert stats.requests == 1


def test_a_failed_rewrite_drops_the_draft_at_its_stage_and_leaves_the_input() -> None:
    llm = wrap_llm(FunctionModel(lambda prompt, system: '{"input": ""}'), max_reasks=0)
    draft = Draft(id="d", input="Why?")
    done = run_sync(rewrite(draft, llm, "p", Rewritten, _parse, "style", None))
    assert done is False and draft.input == "Why?" and draft.history == []
    assert (draft.dropped_at, draft.drop_reason) == ("style", "model_error:invalid_output")
    assert draft.drop_detail == "the rewritten input is blank"
    assert draft.drop_raw == '{"input": ""}'


def _drafts() -> list[Draft]:
    a = Context(id="a", chunk_ids=["a#0"], texts=["t"], source_files=["a"])
    drafts = [Draft(id=f"d{i}", input=f"q{i}", context=a) for i in range(4)]
    drafts[1].drop("before", "gone")
    return drafts


def test_run_live_steps_each_live_draft_and_tallies_only_those() -> None:
    drafts = _drafts()
    seen: list[str] = []

    async def step(draft: Draft) -> None:
        seen.append(draft.id)
        if draft.id == "d2":
            draft.drop("evolve", "bad")

    stats = StageStats(stage="evolve")
    out = run_sync(run_live(drafts, step, stats))
    assert out == drafts and out is not drafts
    assert seen == ["d0", "d2", "d3"]
    assert (stats.items_in, stats.items_out, dict(stats.dropped)) == (3, 2, {"bad": 1})


def test_run_live_without_a_step_only_tallies_and_without_stats_only_steps() -> None:
    drafts = _drafts()
    stats = StageStats(stage="style")
    assert run_sync(run_live(drafts, None, stats)) == drafts
    assert (stats.items_in, stats.items_out, dict(stats.dropped)) == (3, 3, {})
    seen: list[str] = []

    async def step(draft: Draft) -> None:
        seen.append(draft.id)

    assert run_sync(run_live(drafts, step, None)) == drafts and seen == ["d0", "d2", "d3"]


def test_run_live_batches_steps_batches_of_live_drafts_and_tallies_them() -> None:
    drafts = _drafts()
    batches: list[list[str]] = []

    async def step(batch: list[Draft]) -> None:
        batches.append([d.id for d in batch])
        batch[0].drop("expected", "failed")

    stats = StageStats(stage="expected")
    out = run_sync(run_live_batches(drafts, 2, step, stats))
    assert out == drafts and out is not drafts
    assert batches == [["d0", "d2"], ["d3"]]
    assert (stats.items_in, stats.items_out, dict(stats.dropped)) == (3, 1, {"failed": 2})
    assert run_sync(run_live_batches(drafts, 5, step, None)) == drafts
    assert batches[-1] == ["d2"]
