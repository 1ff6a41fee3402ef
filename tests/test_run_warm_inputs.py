"""Inputs asked beside the critic (issue 22): while the critic scores a batch, the feed guesses the
contexts its seeds make if all are accepted and the run asks their inputs ahead, through the
response cache, which the candidate's own request then joins. The goldens are exactly those of a
run that waits for the verdicts; a guess the verdicts do not bear out costs a request, no more.

Order of events only, no clock: critic replies are held until an inputs request has come (a
failure bound, never reached when the inputs are asked beside them)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from synth_replies import Replies, stage_of

from synth import FunctionModel, Synthesizer
from synth.contexts.guess import ASKED, USED, Guesses
from synth.data import Context
from synth.run.stages import CandidateRunner

SAMPLE = Path(__file__).resolve().parents[1] / "sample_docs"
#: how long a held critic reply waits for an inputs request (never reached when asked beside it)
PATIENCE = 10.0


def run(
    tmp: Path, model: object, *, goldens: int = 8, cache: object = "fresh"
) -> tuple[list[dict], dict]:
    synth = Synthesizer(
        FunctionModel(model, name="replies"),
        embedder="hash",
        seed=7,
        cache={} if cache == "fresh" else cache,
        run_dir=tmp / "run",
        store_path=tmp / "store",
    )
    dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=goldens)
    return [json.loads(g.model_dump_json()) for g in dataset], synth.manifest


def group_notes(manifest: dict) -> dict:
    return next(r for r in manifest["stages"] if r["stage"] == "group").get("notes", {})


def test_inputs_are_asked_while_the_critic_replies_are_still_out(tmp_path: Path) -> None:
    replies = Replies()
    asked: list[asyncio.Event] = []
    overlapped: list[bool] = []

    async def model(prompt: str, system: str | None = None) -> str:
        if not asked:
            asked.append(asyncio.Event())
        stage = stage_of(prompt)
        if stage == "inputs":
            asked[0].set()
        elif stage == "critic":
            try:
                await asyncio.wait_for(asked[0].wait(), PATIENCE)
                overlapped.append(True)
            except TimeoutError:
                overlapped.append(False)
        return await replies(prompt, system)

    goldens, manifest = run(tmp_path, model, goldens=4)
    assert len(goldens) == 4
    assert overlapped and all(overlapped), overlapped
    notes = group_notes(manifest)
    assert notes["inputs_asked_ahead"] > 0 and notes["asked_ahead_used"] > 0


@pytest.mark.parametrize("reject", ["0", "0.3"])
def test_a_run_asking_inputs_ahead_gives_the_goldens_of_one_waiting_for_the_critic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reject: str
) -> None:
    monkeypatch.setenv("SYNTH_REPLIES_REJECT", reject)  # rejected seeds make guesses wrong
    ahead_replies, waiting_replies = Replies(), Replies()
    ahead, manifest = run(tmp_path / "a", ahead_replies)
    monkeypatch.setattr(CandidateRunner, "warmer", lambda self: None)
    waiting, manifest_waiting = run(tmp_path / "b", waiting_replies)
    assert len(ahead) == 8 and ahead == waiting
    notes = group_notes(manifest)
    assert "inputs_asked_ahead" not in group_notes(manifest_waiting)
    asked, used = notes["inputs_asked_ahead"], notes["asked_ahead_used"]
    assert 0 < used <= asked
    # each guess the verdicts bore out was the candidate's own request: asked once, not twice
    extra = ahead_replies.counts()["inputs"] - waiting_replies.counts()["inputs"]
    assert 0 <= extra <= asked - used
    if reject == "0":  # every seed accepted: a guess goes wrong only where a later draw took
        assert used >= asked - 1  # a neighbour it claimed (one of these five, here)


def test_without_a_response_cache_nothing_is_asked_ahead(tmp_path: Path) -> None:
    replies = Replies()
    goldens, manifest = run(tmp_path, replies, goldens=4, cache=None)
    assert len(goldens) == 4
    assert "inputs_asked_ahead" not in group_notes(manifest)
    assert replies.counts()["inputs"] == manifest_inputs_requests(manifest)


def manifest_inputs_requests(manifest: dict) -> int:
    return next(r for r in manifest["stages"] if r["stage"] == "inputs")["requests"]


def test_the_warm_requests_left_are_cancelled_when_the_feed_closes() -> None:
    async def main() -> None:
        started = asyncio.Event()

        async def warm(context: Context) -> None:
            started.set()
            await asyncio.sleep(3600)

        guesses = Guesses(warm, limit=2)
        contexts = [
            Context(id=f"c{i}", chunk_ids=[f"k{i}"], texts=["t"], source_files=["f"])
            for i in range(3)
        ]
        guesses._start(contexts)  # what the reader thread hands the loop
        await started.wait()
        assert guesses.counts[ASKED] == 2  # the limit: the first wave's contexts only
        tasks = set(guesses._tasks)
        await guesses.aclose()
        assert tasks and all(task.cancelled() for task in tasks)
        guesses._start(contexts)  # a guess landing after the close starts nothing
        assert not guesses._tasks and guesses.counts[ASKED] == 2
        guesses.grouped(contexts[0])
        guesses.grouped(contexts[2])  # made by the verdicts but never asked ahead
        assert guesses.counts[USED] == 1

    asyncio.run(main())


def _small_corpus(folder: Path) -> Path:
    """Ten files of three chunks each: too few chunks for disjoint contexts of three chunks once
    thirty goldens (fifteen contexts) are asked for, so neighbours are claimed and then shared."""
    folder.mkdir()
    for n in range(10):
        sections = [
            f"## Part {part}\n\nThe unit {n} cabinet keeps part {part} of its cells warm in winter. "
            f"Owners check the unit {n} fan for part {part} every {part + 2} weeks and log it. "
            f"A technician replaces worn seals of unit {n} part {part} during the annual visit."
            for part in range(40)
        ]
        (folder / f"unit_{n}.md").write_text(f"# Unit {n} guide\n\n" + "\n\n".join(sections))
    return folder


def test_a_context_whose_neighbours_depend_on_the_order_of_claims_is_not_asked_ahead(
    tmp_path: Path,
) -> None:
    """In a corpus too small for disjoint contexts, a guess groups a seed with whatever the guesses
    before it left free, and the verdicts' grouping, later, with other neighbours: such a guess
    is not asked ahead (it cost a wasted request each, most of the first wave's); a guess every
    chunk's being free leaves the same still is."""
    synth = Synthesizer(
        FunctionModel(Replies(), name="replies"),
        embedder="hash",
        seed=7,
        cache={},
        run_dir=tmp_path / "run",
        store_path=tmp_path / "store",
    )
    synth.generate_goldens_from_docs(_small_corpus(tmp_path / "docs"), num_goldens=30)
    notes = group_notes(synth.manifest)
    assert synth.manifest["contexts"]["corpus_too_small"]
    assert notes.get("not_asked_ahead_contended", 0) > 0
    # no request asked ahead was wasted: each guess asked was a context the verdicts made
    assert notes.get("asked_ahead_used", 0) >= notes.get("inputs_asked_ahead", 0)
