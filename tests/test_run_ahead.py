"""A step run ahead of the one before it (synth.run.ahead; issue 22): the evolution is asked for
while the filter scores, and the drafts come out exactly as asking in turn would leave them.

Unit tests drive :func:`run_ahead` with a recording step; the run tests compare a whole run with
the lookahead on and off (scripted model, rewrites and drops included) and check that evolve
requests really leave while filter replies are still out. Order of events only, no clock."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import ClassVar

import pytest
from synth_replies import Replies, stage_of

import synth.run.stages as stages_module
from synth import FunctionModel, Synthesizer
from synth.generate.base import Source
from synth.generate.config import FiltrationConfig
from synth.generate.draft import Draft
from synth.run.ahead import KEPT, REDONE, WASTED, Ahead, run_ahead

SAMPLE = Path(__file__).resolve().parents[1] / "sample_docs"
SOURCE = Source("candidate-0")
MAY_CHANGE = frozenset({"input_quality", "feedback"})
#: how long a held filter reply waits for an evolve request (a failure bound, never reached when
#: the evolution runs ahead)
PATIENCE = 10.0


class Evolver:
    """A per-draft step: each live draft's input rewritten (``+ " [evolved]"``), calls recorded."""

    name: ClassVar[str] = "evolve"

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []  # the input each call saw
        self.fail = fail

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        for draft in drafts:
            if not draft.kept:
                continue
            self.calls.append(draft.input)
            if self.fail:
                raise RuntimeError("evolve failed")
            draft.revise("evolve", draft.input + " [evolved]", evolution="reasoning")
            draft.evolutions.append("reasoning")
            draft.metadata["evolved"] = True
        return drafts


def drafts() -> list[Draft]:
    return [Draft(id=f"d{i}", input=f"question {i}?", metadata={"n": i}) for i in range(3)]


def open_gate() -> asyncio.Future[None]:
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    done.set_result(None)
    return done


def filter_like(batch: list[Draft]) -> None:
    """What a filter does: keeps d0 as it is (scored), rewrites d1, drops d2."""
    batch[0].input_quality, batch[0].feedback = 0.9, "clear"
    batch[1].revise("filter", "question 1, clarified?", attempt=1)
    batch[1].input_quality = 0.8
    batch[2].drop("filter", "below_input_quality_threshold", "scored 0.2")


async def in_turn() -> tuple[list[Draft], Evolver]:
    batch, step = drafts(), Evolver()
    filter_like(batch)
    return await step.run(batch, SOURCE), step


async def ahead_of_filter(step: Evolver) -> tuple[list[Draft], dict[str, int]]:
    batch = drafts()
    ahead = run_ahead(step, batch, SOURCE, MAY_CHANGE, open_gate)
    await asyncio.sleep(0)  # the evolution starts while the filter is still out
    filter_like(batch)
    settled = await ahead.settle(batch, SOURCE)
    return settled, dict(ahead.counts)


def test_drafts_settle_exactly_as_in_turn_kept_redone_and_wasted() -> None:
    async def main() -> None:
        expected, _ = await in_turn()
        step = Evolver()
        got, counts = await ahead_of_filter(step)
        assert [d.model_dump() for d in got] == [d.model_dump() for d in expected]
        assert counts == {KEPT: 1, REDONE: 1, WASTED: 1}
        # d0's evolution made ahead was kept; d1 was evolved again from its rewrite
        assert step.calls == ["question 0?", "question 1?", "question 2?", "question 1, clarified?"]

    asyncio.run(main())


def test_a_change_the_earlier_step_may_not_make_is_redone() -> None:
    async def main() -> None:
        step = Evolver()
        batch = drafts()
        ahead = run_ahead(step, batch, SOURCE, MAY_CHANGE, open_gate)
        await asyncio.sleep(0)
        batch[0].metadata["language"] = "de"  # not the score or the feedback
        batch[1].input_quality = 0.7
        settled = await ahead.settle(batch, SOURCE)
        assert ahead.counts == {REDONE: 1, KEPT: 2}
        assert settled[0].metadata == {"n": 0, "language": "de", "evolved": True}
        assert settled[0].history == [
            {"stage": "evolve", "input": "question 0?", "evolution": "reasoning"}
        ]
        assert settled[1].input_quality == 0.7 and settled[1].input == "question 1? [evolved]"

    asyncio.run(main())


def held_at_its_gate() -> tuple[Evolver, list[Draft], Ahead, asyncio.Event]:
    """A run ahead (on the running loop) whose gate opens only when the event is set."""
    step, gate = Evolver(), asyncio.Event()

    async def wait() -> None:
        await gate.wait()

    batch = drafts()
    return step, batch, run_ahead(step, batch, SOURCE, MAY_CHANGE, wait), gate


def test_the_run_ahead_waits_for_the_later_steps_gate() -> None:
    async def main() -> None:
        step, batch, ahead, gate = held_at_its_gate()
        for _ in range(5):
            await asyncio.sleep(0)
        assert step.calls == []  # a spare held at its gate evolves nothing
        gate.set()
        settled = await ahead.settle(batch, SOURCE)
        assert [d.input for d in settled] == [f"question {i}? [evolved]" for i in range(3)]

    asyncio.run(main())


def test_every_draft_dropped_cancels_the_run_ahead() -> None:
    async def main() -> None:
        step, batch, ahead, _ = held_at_its_gate()
        for draft in batch:
            draft.drop("filter", "below_input_quality_threshold")
        settled = await ahead.settle(batch, SOURCE)
        assert settled is batch and ahead.counts == {WASTED: 3}
        await asyncio.sleep(0)
        assert ahead.task.cancelled() and step.calls == []

    asyncio.run(main())


def test_a_failure_made_ahead_is_raised_when_its_result_is_wanted() -> None:
    async def main() -> None:
        batch = drafts()
        ahead = run_ahead(Evolver(fail=True), batch, SOURCE, MAY_CHANGE, open_gate)
        with pytest.raises(RuntimeError, match="evolve failed"):
            await ahead.settle(batch, SOURCE)

    asyncio.run(main())


def test_a_failure_made_ahead_and_discarded_is_not_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        batch = drafts()
        ahead = run_ahead(Evolver(fail=True), batch, SOURCE, MAY_CHANGE, open_gate)
        await asyncio.sleep(0)
        assert ahead.task.done()
        ahead.discard()  # the earlier step failed: nothing is awaited

    asyncio.run(main())
    import gc

    gc.collect()
    assert "never retrieved" not in caplog.text


# ---- in a run ---------------------------------------------------------------------------------


def run_goldens(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool
) -> tuple[list[dict], dict, Replies]:
    monkeypatch.setenv("SYNTH_REPLIES_VAGUE", "0.3")
    monkeypatch.setenv("SYNTH_REPLIES_POINTING", "0.3")
    if not ahead:
        monkeypatch.setattr(stages_module, "RUNS_AHEAD", {})
    replies = Replies()
    synth = Synthesizer(
        FunctionModel(replies, name="replies"),
        embedder="hash",
        seed=5,
        cache=None,
        run_dir=tmp / "run",
        store_path=tmp / "store",
        # one rewrite round for half the vague inputs' contexts, none for the others: kept,
        # rewritten and dropped drafts all come through the filter
        filtration_config=FiltrationConfig(max_quality_retries=1),
    )
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=16)
    rows = [json.loads(g.model_dump_json(exclude={"metadata"})) for g in dataset]
    for golden, row in zip(dataset, rows, strict=True):
        meta = golden.metadata
        row["evolutions"], row["input_quality"] = meta["evolutions"], meta["input_quality"]
    return rows, synth.manifest, replies


def test_a_run_with_the_evolution_ahead_gives_the_goldens_of_a_run_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead, manifest, replies = run_goldens(tmp_path / "a", monkeypatch, ahead=True)
    in_turn, manifest_in_turn, replies_in_turn = run_goldens(
        tmp_path / "b", monkeypatch, ahead=False
    )
    assert len(ahead) == 16
    assert [row["input"] for row in ahead] == [row["input"] for row in in_turn]
    assert ahead == in_turn
    notes = next(r for r in manifest["stages"] if r["stage"] == "evolve")["notes"]
    assert notes.get(KEPT, 0) > 0 and notes.get(REDONE, 0) > 0, notes
    assert any("(clarified)" in row["input"] for row in ahead)  # rewritten inputs were evolved
    # each draft redone costs one evolution more than in turn; each thrown away, one at most
    extra = replies.counts()["evolve"] - replies_in_turn.counts()["evolve"]
    assert notes[REDONE] <= extra <= notes[REDONE] + notes.get(WASTED, 0)
    in_turn_row = next(r for r in manifest_in_turn["stages"] if r["stage"] == "evolve")
    assert "notes" not in in_turn_row
    # the final check rewrote the evolved inputs that pointed at the passage, in both runs
    assert not any("the passage" in row["input"] for row in ahead)
    # the expected outputs asked beside the final check, for the contexts whose inputs its plain
    # code all passed: an input pointing at the passage (plain code finds it) is answered once,
    # from its rewrite, beside its context's other inputs (one request, as in turn)
    expected_notes = next(r for r in manifest["stages"] if r["stage"] == "expected")["notes"]
    assert expected_notes.get(KEPT, 0) > 0, expected_notes
    expected_prompts = [p for p in replies.prompts if stage_of(p) == "expected"]
    assert expected_prompts and not any("the passage?" in p for p in expected_prompts)
    assert replies.counts()["expected"] == replies_in_turn.counts()["expected"]
    pointing = [p for p in replies.prompts if stage_of(p) == "check_alone" and "the passage?" in p]
    assert not pointing  # rewritten before the critic saw them


def _assert_asked_while_replies_are_out(tmp_path: Path, ahead: str, held: str) -> None:
    """Every reply of a ``held`` stage waits until a request of the ``ahead`` stage has been sent:
    the run asks ``ahead`` while ``held``'s replies are still out."""
    replies = Replies()
    asked = asyncio.Event()
    overlapped: list[bool] = []

    async def model(prompt: str, system: str | None = None) -> str:
        stage = stage_of(prompt)
        if stage == ahead:
            asked.set()
        elif stage.startswith(held):
            try:
                await asyncio.wait_for(asked.wait(), PATIENCE)
                overlapped.append(True)
            except TimeoutError:
                overlapped.append(False)
        return await replies(prompt, system)

    synth = Synthesizer(
        FunctionModel(model, name="held"),
        embedder="hash",
        cache=None,
        run_dir=tmp_path / "run",
        store_path=tmp_path / "store",
    )
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=6)
    assert len(dataset) == 6
    assert overlapped and all(overlapped), overlapped


def test_evolutions_are_asked_while_filter_replies_are_still_out(tmp_path: Path) -> None:
    _assert_asked_while_replies_are_out(tmp_path, ahead="evolve", held="filter")


class Dropper(Evolver):
    """A later step whose request fails for each draft: dropped, with the raw reply kept."""

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        for draft in drafts:
            if draft.kept:
                self.calls.append(draft.input)
                draft.drop("evolve", "model_error:invalid_output", "no JSON", raw="not json")
        return drafts


def test_a_drop_made_ahead_keeps_its_raw_reply() -> None:
    async def main() -> None:
        batch = drafts()
        ahead = run_ahead(Dropper(), batch, SOURCE, MAY_CHANGE, open_gate)
        settled = await ahead.settle(batch, SOURCE)
        assert [d.drop_raw for d in settled] == ["not json"] * 3
        assert all(d.dropped_at == "evolve" for d in settled)

    asyncio.run(main())


def test_a_field_both_steps_wrote_is_redone_even_when_the_earlier_may_change_it() -> None:
    async def main() -> None:
        step = Evolver()
        batch = drafts()
        may_change = frozenset({"history", "input_quality"})
        ahead = run_ahead(step, batch, SOURCE, may_change, open_gate)
        await asyncio.sleep(0)
        batch[0].history.append({"stage": "filter", "note": "scored"})  # evolve appends too
        settled = await ahead.settle(batch, SOURCE)
        assert [h["stage"] for h in settled[0].history] == ["filter", "evolve"]
        assert ahead.counts == {KEPT: 2, REDONE: 1}

    asyncio.run(main())


def test_drafts_dropped_before_the_earlier_step_are_not_counted_as_wasted() -> None:
    async def main() -> None:
        batch = drafts()
        batch[2].drop("inputs", "model_error:timeout")
        ahead = run_ahead(Evolver(), batch, SOURCE, MAY_CHANGE, open_gate)
        batch[1].drop("filter", "below_input_quality_threshold")
        await ahead.settle(batch, SOURCE)
        assert ahead.counts == {KEPT: 1, WASTED: 1}

    asyncio.run(main())


def test_expected_outputs_are_asked_while_final_check_replies_are_still_out(
    tmp_path: Path,
) -> None:
    _assert_asked_while_replies_are_out(tmp_path, ahead="expected", held="check")
