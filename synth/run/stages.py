"""Stages 5 to 9 for one candidate: inputs, filter, evolve, style, expected output.

Each stage's output (every draft, dropped ones with their reason) is appended to the run's journal
as soon as the stage is done for that candidate, and a resumed run starts each candidate after its
last journaled stage, so no finished work is asked for again. Dropped drafts also go to
``rejects.jsonl``, with the check that failed and the raw reply of a failed request
(``synth.run.rejects``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from synth.errors import AuthenticationError, ModelError
from synth.generate import evolve, expected, inputs, style
from synth.generate import filter as input_filter
from synth.generate.config import (
    EvolutionConfig,
    FiltrationConfig,
    GenerationConfig,
    StylingConfig,
)
from synth.generate.dedup import LABEL as DEDUP
from synth.generate.draft import Draft, drop_failed
from synth.generate.templates import PromptSet
from synth.llm.base import LLM
from synth.llm.limiter import RateLimiter
from synth.run.dir import RunDir
from synth.run.feeds import Candidate
from synth.run.rejects import BAD_REPLIES, reject_row

#: the generation stages, in order
STAGES = ("inputs", "filter", "evolve", "style", "expected")
#: style examples shown when generating from scratch or from goldens
MAX_EXAMPLES = 12


@dataclass
class StageSettings:
    """What the generation stages need: the models, each stage's config, the prompts and the seed.

    ``filtration`` None switches the filter off.
    """

    generator: LLM
    critic: LLM
    generation: GenerationConfig
    filtration: FiltrationConfig | None
    evolution: EvolutionConfig
    styling: StylingConfig
    prompts: PromptSet
    seed: int
    embedder: Any = None  # embeds finished inputs for deduplication (None: no deduplication)
    limiter: RateLimiter | None = None  # the models' limiter: remote embedding requests share it

    def active_stages(self) -> list[str]:
        out = ["inputs"]
        if self.filtration is not None:
            out.append("filter")
        if self.evolution.num_evolutions > 0:
            out.append("evolve")
        out.append("style")
        if self.generation.include_expected_output:
            out.append("expected")
        return out


def dump_drafts(drafts: list[Draft]) -> list[dict[str, Any]]:
    """Drafts as JSON rows, without their context (the candidate holds it)."""
    return [d.model_dump(mode="json", exclude={"context"}) for d in drafts]


def load_drafts(rows: list[dict[str, Any]], candidate: Candidate) -> list[Draft]:
    return [Draft.model_validate({**row, "context": candidate.context}) for row in rows]


class CandidateRunner:
    """Runs the generation stages for candidates, journaling each stage's output.

    ``on_stage(candidate, stage, drafts)`` is called after every stage (fresh or resumed), so the
    controller can track how many drafts are still alive.
    """

    def __init__(
        self,
        settings: StageSettings,
        run: RunDir,
        on_stage: Callable[[Candidate, str, list[Draft]], None],
    ) -> None:
        self.settings = settings
        self.run = run
        self.on_stage = on_stage
        self.stages = settings.active_stages()
        self._scratch_inputs: dict[int, asyncio.Future[list[str]]] = {}

    async def process(self, candidate: Candidate) -> tuple[list[Draft], list[list[float]]]:
        """All drafts of one candidate (dropped ones marked) and the vectors of the kept ones."""
        drafts: list[Draft] | None = None
        start = 0
        for index in range(len(self.stages) - 1, -1, -1):
            record = self.run.journal(self.stages[index]).get(candidate.key)
            if record is not None:
                drafts = load_drafts(record["drafts"], candidate)
                start = index + 1
                break
        if candidate.scratch:
            self._note_scratch_inputs(candidate)
        if drafts is not None:
            for stage in self.stages[:start]:
                self.on_stage(candidate, stage, drafts)
        failed = False
        for stage in self.stages[start:]:
            before = {d.id for d in drafts or [] if d.kept}
            drafts = await self._run_stage(stage, candidate, drafts or [])
            failed = failed or any(
                (d.drop_reason or "").startswith("model_error")
                for d in drafts
                if stage == "inputs" or d.id in before
            )
            if not failed:
                # once a request failed, nothing more of this candidate is journaled: a rerun
                # asks again from there (what did answer comes from the response cache)
                self.run.journal(stage).append(candidate.key, {"drafts": dump_drafts(drafts)})
            self._record_rejects(
                candidate, stage, [d for d in drafts if stage == "inputs" or d.id in before]
            )
            if stage == "inputs" and candidate.scratch:
                self._scratch_future(candidate.seq).set_result([d.input for d in drafts if d.kept])
            self.on_stage(candidate, stage, drafts)
        assert drafts is not None
        try:
            vectors = await self._vectors(candidate, drafts)
        except AuthenticationError:
            raise  # a refused key ends the run, as it does for the models
        except ModelError as exc:
            # the embedder failed after its retries: these inputs cannot be compared with the
            # kept ones, so they are dropped (and topped up) rather than ending the run; nothing
            # is journaled for them, so a rerun embeds them again
            failing = [d for d in drafts if d.kept]
            for draft in failing:
                drop_failed(draft, DEDUP, exc)
            self._record_rejects(candidate, DEDUP, failing)
            vectors = []
        return drafts, vectors

    def _record_rejects(self, candidate: Candidate, stage: str, drafts: list[Draft]) -> None:
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

    # ---- one stage -------------------------------------------------------------------------------
    async def _run_stage(
        self, stage: str, candidate: Candidate, drafts: list[Draft]
    ) -> list[Draft]:
        s = self.settings
        if stage == "inputs":
            return await self._inputs(candidate)
        if stage == "filter":
            assert s.filtration is not None
            return await input_filter.run(drafts, s.critic, s.filtration, prompts=s.prompts)
        if stage == "evolve":
            return await evolve.run(
                drafts, s.generator, s.evolution, seed=s.seed, prompts=s.prompts
            )
        if stage == "style":
            return await style.run(drafts, s.generator, s.styling, seed=s.seed, prompts=s.prompts)
        if stage == "expected":
            return await expected.run(drafts, s.generator, styling=s.styling, prompts=s.prompts)
        raise AssertionError(f"unknown stage {stage}")

    async def _inputs(self, candidate: Candidate) -> list[Draft]:
        s = self.settings
        n = s.generation.max_goldens_per_context
        if candidate.scratch:
            if candidate.seq == 0:
                return await inputs.run_from_scratch(
                    n, s.generator, s.styling, key=candidate.key, prompts=s.prompts
                )
            earlier: list[str] = []
            for seq in range(candidate.seq):
                earlier.extend(await self._scratch_future(seq))
            return await inputs.run_from_examples(
                earlier[-MAX_EXAMPLES:] or ["(none yet)"],
                n,
                s.generator,
                styling=s.styling,
                key=candidate.key,
                prompts=s.prompts,
            )
        if candidate.examples is not None:
            return await inputs.run_from_examples(
                candidate.examples[:MAX_EXAMPLES],
                n,
                s.generator,
                context=candidate.context,
                styling=s.styling,
                key=candidate.key,
                prompts=s.prompts,
            )
        assert candidate.context is not None
        return await inputs.run(
            candidate.context,
            s.generator,
            s.generation,
            styling=s.styling,
            key=candidate.key,
            prompts=s.prompts,
        )

    # ---- scratch batches build on the inputs of the batches before them --------------------------
    def _scratch_future(self, seq: int) -> asyncio.Future[list[str]]:
        if seq not in self._scratch_inputs:
            self._scratch_inputs[seq] = asyncio.get_running_loop().create_future()
        return self._scratch_inputs[seq]

    def _note_scratch_inputs(self, candidate: Candidate) -> None:
        record = self.run.journal("inputs").get(candidate.key)
        future = self._scratch_future(candidate.seq)
        if record is not None and not future.done():
            future.set_result(
                [row["input"] for row in record["drafts"] if row["drop_reason"] is None]
            )

    # ---- vectors for deduplication ---------------------------------------------------------------
    async def _vectors(self, candidate: Candidate, drafts: list[Draft]) -> list[list[float]]:
        kept = [d for d in drafts if d.kept]
        if self.settings.embedder is None or not kept:
            return []
        journal = self.run.journal("vectors")
        record = journal.get(candidate.key)
        if record is not None and record["ids"] == [d.id for d in kept]:
            return record["vectors"]
        embedder = self.settings.embedder
        texts = [d.input for d in kept]
        # a remote embedder made for the run holds a slot of the run's limiter per request itself
        array = await asyncio.to_thread(embedder.embed, texts, label="dedup")
        vectors = [[float(x) for x in row] for row in array]
        journal.append(candidate.key, {"ids": [d.id for d in kept], "vectors": vectors})
        return vectors


__all__ = [
    "MAX_EXAMPLES",
    "STAGES",
    "CandidateRunner",
    "StageSettings",
    "dump_drafts",
    "load_drafts",
]
