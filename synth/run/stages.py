"""The step runner: the generation steps for one candidate, each step's output journaled.

The steps are :func:`synth.generate.steps.build_steps` of the run's settings, walked in order.
Each step's output (every draft, dropped ones with their reason) is appended to the run's journal
as soon as the step is done for that candidate, and a resumed run starts each candidate after its
last journaled step, so no finished work is asked for again. Dropped drafts also go to
``rejects.jsonl``, with the check that failed and the raw reply of a failed request
(``synth.run.rejects``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from synth._journal import reject_row
from synth.contexts.feed import Candidate
from synth.data import Context
from synth.errors import AuthenticationError, ModelError
from synth.generate.base import ForeseesKept, Source, Step
from synth.generate.dedup import LABEL as DEDUP
from synth.generate.draft import Draft, drop_failed
from synth.generate.inputs import InputsStep
from synth.generate.steps import RUNS_AHEAD, WRITES_INPUTS, StageSettings, build_steps
from synth.llm.cache import CacheModel
from synth.llm.wrapper import WrapperModel
from synth.run.ahead import Ahead, run_ahead
from synth.run.difficulty import DifficultyMeter
from synth.run.dir import RunDir
from synth.run.rejects import BAD_REPLIES
from synth.stage.stats import StageStats, count_stages

#: style examples shown when generating from scratch or from goldens
MAX_EXAMPLES = 12


def dump_drafts(drafts: list[Draft]) -> list[dict[str, Any]]:
    """Drafts as JSON rows, without their context (the candidate holds it)."""
    return [d.model_dump(mode="json", exclude={"context"}) for d in drafts]


def load_drafts(rows: list[dict[str, Any]], candidate: Candidate) -> list[Draft]:
    return [Draft.model_validate({**row, "context": candidate.context}) for row in rows]


@dataclasses.dataclass
class Early:
    """The kept drafts' inputs (``(id, input)``, in order) being embedded before the last steps."""

    embedded: list[tuple[str, str]]
    task: asyncio.Future[Any]

    async def rows_for(self, kept: list[Draft]) -> list[Any] | None:
        """The vectors of ``kept`` (a failed embedding raises); None when one of them was not
        embedded as it is now (a step after the start rewrote or added it: embed afresh)."""
        rows = await self.task
        at = {pair: i for i, pair in enumerate(self.embedded)}
        picks = [at.get((d.id, d.input)) for d in kept]
        if any(i is None for i in picks):
            return None
        return [rows[i] for i in picks if i is not None]

    def discard(self) -> None:
        """Not needed after all: cancelled, or its failure retrieved (so none is logged)."""
        if not self.task.done():
            self.task.cancel()
        elif not self.task.cancelled():
            self.task.exception()


class CandidateRunner:
    """Walks the generation steps for candidates, journaling each step's output.

    ``on_stage(candidate, stage, drafts)`` is called after every step (fresh or resumed), so the
    controller can track how many drafts are still alive; ``stages`` names the steps in order.
    ``gate(candidate, index)`` is awaited before each step after the first (the controller holds
    back a candidate it may not need).
    ``meter`` measures the finished drafts' difficulty (none: not measured), and is what the
    steps that search the run's chunks search.
    """

    def __init__(
        self,
        settings: StageSettings,
        run: RunDir,
        on_stage: Callable[[Candidate, str, list[Draft]], None],
        meter: DifficultyMeter | None = None,
        gate: Callable[[Candidate, int], Awaitable[None]] | None = None,
    ) -> None:
        self.settings = settings
        self.run = run
        self.on_stage = on_stage
        self.gate = gate
        self.meter = meter
        if meter is not None:  # the distracting and out-of-scope steps search the run's chunks
            settings = dataclasses.replace(settings, search=meter)
        self.steps: list[Step] = build_steps(settings)
        self.stages = [step.name for step in self.steps]
        self._scratch_inputs: dict[int, asyncio.Future[list[str]]] = {}
        #: by step: how its runs made ahead of the step before it ended (synth.run.ahead)
        self.ahead_counts: defaultdict[str, Counter[str]] = defaultdict(Counter)

    async def process(self, candidate: Candidate) -> tuple[list[Draft], list[list[float]]]:
        """All drafts of one candidate (dropped ones marked) and the vectors of the kept ones."""
        drafts, start = self._resume(candidate)
        failed = False
        ahead: Ahead | None = None  # the next step, started before this one ends
        early: Early | None = None  # the inputs' vectors, asked once no later step rewrites them
        try:
            for index, step in enumerate(self.steps[start:], start):
                before = {d.id for d in drafts}
                alive = {d.id for d in drafts if d.kept}
                if ahead is not None:
                    if early is None and self._inputs_final(index) and ahead.started.is_set():
                        early = self._embed_early(candidate, drafts)  # beside what is still out
                    drafts = await ahead.settle(drafts, Source(candidate.key))
                    self.ahead_counts[step.name].update(ahead.counts)
                    ahead = None
                else:
                    if index > 0 and self.gate is not None:
                        await self.gate(candidate, index)
                    source = await self._source(candidate) if index == 0 else Source(candidate.key)
                    if early is None and self._inputs_final(index):  # past its gate: needed
                        early = self._embed_early(candidate, drafts)
                    ahead = self._run_ahead(candidate, index, drafts)
                    drafts = await step.run(drafts, source)
                failed = self._after_step(candidate, index, step, drafts, before, alive, failed)
        except BaseException:
            if early is not None:
                early.discard()
            raise
        finally:
            if ahead is not None:
                ahead.discard()
        vectors = await self._dedup_vectors(candidate, drafts, early)
        if self.meter is not None:  # measured afresh on resume: it is cheap and deterministic
            await self.meter.measure(drafts, vectors)
        return drafts, vectors

    def warmer(self) -> Callable[[Context], Awaitable[None]] | None:
        """What asks the first step's request for a context ahead (:meth:`DocsFeed.warm_with
        <synth.contexts.seed_feed.DocsFeed.warm_with>`), when the candidate's own request can
        join it: the first step asks from a context alone and the generator answers through a
        response cache (which sends identical requests once). None otherwise, and through a
        Batch API, where a request asked ahead would go in a job of its own (a round of hours)."""
        from synth.llm.batch import BatchModel

        first = self.steps[0] if self.steps else None
        inner = getattr(first, "step", first)  # the language check wraps the step
        llm = self.settings.generator
        if not isinstance(inner, InputsStep) or not isinstance(llm, WrapperModel):
            return None
        if llm.layer(CacheModel) is None or llm.layer(BatchModel) is not None:
            return None
        return inner.warm

    def _inputs_final(self, index: int) -> bool:
        """Whether no step from ``index`` on writes inputs (so the inputs may be embedded now)."""
        return index > 0 and not any(s.name in WRITES_INPUTS for s in self.steps[index:])

    def _embed_early(self, candidate: Candidate, drafts: list[Draft]) -> Early | None:
        """The kept drafts' inputs embedded beside the steps left (none: nothing to embed, no
        embedder, or vectors journaled already)."""
        kept = [(d.id, d.input) for d in drafts if d.kept]
        embedder = self.settings.embedder
        if embedder is None or not kept or self.run.journal("vectors").get(candidate.key):
            return None
        task = asyncio.ensure_future(embedder.aembed([text for _, text in kept], label="dedup"))
        return Early(kept, task)

    def _run_ahead(self, candidate: Candidate, index: int, drafts: list[Draft]) -> Ahead | None:
        """The step after ``index`` started now, when it may run ahead of it (RUNS_AHEAD)."""
        if index == 0 or index + 1 >= len(self.steps):
            return None  # the first step makes the drafts: nothing to start the next one on
        step, later = self.steps[index], self.steps[index + 1]
        may_change = RUNS_AHEAD.get((step.name, later.name))
        if may_change is None or not any(d.kept for d in drafts):
            return None
        inner = getattr(step, "step", step)  # the language check wraps the step
        if isinstance(inner, ForeseesKept) and len(inner.foreseen_kept(drafts)) < sum(
            d.kept for d in drafts
        ):
            # a draft it will most likely rewrite would be asked again, and the later step
            # asked for the others alone would take a request more for it: not run ahead
            return None

        async def gate() -> None:
            if self.gate is not None:
                await self.gate(candidate, index + 1)

        return run_ahead(later, drafts, Source(candidate.key), may_change, gate)

    def _after_step(
        self,
        candidate: Candidate,
        index: int,
        step: Step,
        drafts: list[Draft],
        before: set[str],
        alive: set[str],
        failed: bool,
    ) -> bool:
        """Journal and record what ``step`` did; whether a request of the candidate has failed."""
        # what this step judged: the drafts it made, and those alive when it began
        judged = [d for d in drafts if d.id in alive or d.id not in before]
        failed = failed or any((d.drop_reason or "").startswith("model_error") for d in judged)
        if not failed:
            # once a request failed, nothing more of this candidate is journaled: a rerun
            # asks again from there (what did answer comes from the response cache)
            self.run.journal(step.name).append(candidate.key, {"drafts": dump_drafts(drafts)})
        self.record_rejects(candidate, step.name, judged)
        if index == 0 and candidate.scratch:
            self._scratch_future(candidate.seq).set_result([d.input for d in drafts if d.kept])
        self.on_stage(candidate, step.name, drafts)
        return failed

    def stage_stats(self, drafts: list[Draft], contexts: int) -> list[StageStats]:
        """One record per step, and for deduplication, from the drafts of the candidates a run
        used (``contexts`` of them): in, out and dropped by reason (usage added by the caller)."""
        stats = count_stages(self.stages, drafts, contexts, final_stage=DEDUP)
        for row in stats:  # every candidate's, spares' too, as the requests are
            row.notes.update(self.ahead_counts.get(row.stage, Counter()))
        return stats

    def _resume(self, candidate: Candidate) -> tuple[list[Draft], int]:
        """The drafts after the candidate's last journaled step, and the index of the next step."""
        drafts: list[Draft] = []
        start = 0
        for index in range(len(self.stages) - 1, -1, -1):
            record = self.run.journal(self.stages[index]).get(candidate.key)
            if record is not None:
                drafts = load_drafts(record["drafts"], candidate)
                start = index + 1
                break
        if candidate.scratch:
            self._note_scratch_inputs(candidate)
        for stage in self.stages[:start]:
            self.on_stage(candidate, stage, drafts)
        return drafts, start

    async def _source(self, candidate: Candidate) -> Source:
        """Where the candidate's inputs come from; a scratch batch after the first is written
        like the inputs of the batches before it."""
        if candidate.scratch and candidate.seq > 0:
            earlier: list[str] = []
            for seq in range(candidate.seq):
                earlier.extend(await self._scratch_future(seq))
            return Source(candidate.key, examples=earlier[-MAX_EXAMPLES:] or ["(none yet)"])
        if candidate.scratch:
            return Source(candidate.key)
        examples = candidate.examples[:MAX_EXAMPLES] if candidate.examples is not None else None
        return Source(candidate.key, candidate.context, examples)

    async def _dedup_vectors(
        self, candidate: Candidate, drafts: list[Draft], early: Early | None = None
    ) -> list[list[float]]:
        """The vectors of the kept drafts (from ``early`` when it embedded them); when the
        embedder fails, those drafts dropped."""
        try:
            return await self._vectors(candidate, drafts, early)
        except AuthenticationError:
            raise  # a refused key ends the run, as it does for the models
        except ModelError as exc:
            # the embedder failed after its retries: these inputs cannot be compared with the
            # kept ones, so they are dropped (and topped up) rather than ending the run; nothing
            # is journaled for them, so a rerun embeds them again
            failing = [d for d in drafts if d.kept]
            for draft in failing:
                drop_failed(draft, DEDUP, exc)
            self.record_rejects(candidate, DEDUP, failing)
            return []

    def record_rejects(self, candidate: Candidate, stage: str, drafts: list[Draft]) -> None:
        """Append the dropped ones of ``drafts`` (dropped at ``stage``) to ``rejects.jsonl``."""
        rejects = self.run.journal("rejects")
        for draft in drafts:
            if draft.kept:
                continue
            record = {
                "candidate": candidate.key,
                "stage": draft.dropped_at or stage,
                "reason": draft.drop_reason,
                "input": draft.input,
            }
            bad = self.run.journal(BAD_REPLIES)
            rejects.append(draft.id, reject_row(record, draft.drop_detail, draft.drop_raw, bad))

    # ---- scratch batches build on the inputs of the batches before them --------------------------
    def _scratch_future(self, seq: int) -> asyncio.Future[list[str]]:
        if seq not in self._scratch_inputs:
            self._scratch_inputs[seq] = asyncio.get_running_loop().create_future()
        return self._scratch_inputs[seq]

    def _note_scratch_inputs(self, candidate: Candidate) -> None:
        record = self.run.journal(self.stages[0]).get(candidate.key)
        future = self._scratch_future(candidate.seq)
        if record is not None and not future.done():
            future.set_result(
                [row["input"] for row in record["drafts"] if row["drop_reason"] is None]
            )

    # ---- vectors for deduplication ---------------------------------------------------------------
    async def _vectors(
        self, candidate: Candidate, drafts: list[Draft], early: Early | None = None
    ) -> list[list[float]]:
        kept = [d for d in drafts if d.kept]
        if self.settings.embedder is None or not kept:
            if early is not None:
                early.discard()
            return []
        journal = self.run.journal("vectors")
        record = journal.get(candidate.key)
        if record is not None and record["ids"] == [d.id for d in kept]:
            if early is not None:
                early.discard()
            journaled: list[list[float]] = record["vectors"]
            return journaled
        embedder = self.settings.embedder
        texts = [d.input for d in kept]
        # a remote embedder made for the run holds a slot of the run's limiter per request itself
        rows = await early.rows_for(kept) if early is not None else None
        if rows is None:
            rows = list(await embedder.aembed(texts, label="dedup"))
        vectors = [[float(x) for x in row] for row in rows]
        journal.append(candidate.key, {"ids": [d.id for d in kept], "vectors": vectors})
        return vectors


__all__ = [
    "MAX_EXAMPLES",
    "CandidateRunner",
    "StageSettings",
    "dump_drafts",
    "load_drafts",
]
