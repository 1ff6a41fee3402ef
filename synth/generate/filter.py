"""The input filter: a critic scores inputs for self-containment and a clear objective.

All live inputs of one context are scored in one request. Those below
``synthetic_input_quality_threshold`` are rewritten with the critic's feedback and scored again, up
to ``max_quality_retries`` rounds. The critic is asked to include the rewrite in its scoring reply,
so a round usually costs one request (the rescoring); inputs it gave no rewrite for are rewritten in
one extra request. Each draft keeps its best-scoring version with that version's own score; one that
never reaches the threshold is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, Field

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._rewrite import run_live_batches
from synth.generate.base import Source
from synth.generate.config import FiltrationConfig
from synth.generate.draft import Draft, drop_failed
from synth.generate.language import draft_language, language_line
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import BatchRequest, ask_batch, values_of
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, prompts_for
from synth.stage.text import context_text, feedback_items, orientation_text, tagged_list

LABEL = "filter"
REWRITE_LABEL = "filter_rewrite"
#: how a failed match of a scoring or a rewrite reply is described
WHAT = "the filter reply covers items"
REWRITE_WHAT = "the rewrite reply covers items"
BELOW_THRESHOLD = "below_input_quality_threshold"
#: inputs scored in one request at most (a context has max_goldens_per_context of them)
MAX_BATCH = 10


class InputScore(BaseModel):
    """The critic's verdict on one input, with its proposed rewrite when it scored low; the
    feedback comes first (strict decoding writes fields in order: the reason before the score)."""

    feedback: str = ""
    score: float = Field(ge=0.0, le=1.0)
    rewrite: str | None = None


class _ScoreItem(BaseModel):
    index: int
    feedback: str = ""
    score: float = Field(ge=0.0, le=1.0)
    rewrite: str | None = None


class FilterReply(BaseModel):
    """The scoring reply schema: one entry per input, in order."""

    scores: list[_ScoreItem]


class _RewriteItem(BaseModel):
    index: int
    input: str


class RewriteReply(BaseModel):
    """The rewrite reply schema: one entry per input, in order."""

    inputs: list[_RewriteItem]


def build_prompt(
    inputs: Sequence[str],
    context: Context | None,
    prompts: PromptSet | None = None,
    threshold: float = 0.5,
    language: str | None = None,
) -> str:
    """The scoring prompt for the inputs of one context (rewrites asked below ``threshold``, in
    ``language``)."""
    return prompts_for(prompts, language).render(
        "filter",
        inputs=tagged_list("inputs", "input", list(inputs)),
        context=context_text(context),
        orientation=orientation_text(context),
        count=len(inputs),
        threshold=f"{threshold:g}",
        language=language_line(language, "every rewrite"),
    )


def check_reply(reply: FilterReply, n: int, raw: str = "") -> list[InputScore]:
    """The ``n`` scores in input order, matched as a batch reply is
    (:mod:`synth.stage.batch`); OutputParseError if one is left unmatched."""
    return values_of(reply, n, WHAT, _input_score, raw)


def parse(text: str, n: int) -> list[InputScore]:
    """Parse a scoring reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, FilterReply), n, raw=text)


def build_rewrite_prompt(
    items: Sequence[tuple[str, str]],
    context: Context | None,
    prompts: PromptSet | None = None,
    language: str | None = None,
) -> str:
    """The rewrite prompt for ``(input, feedback)`` pairs of one context."""
    return prompts_for(prompts, language).render(
        "rewrite",
        items=feedback_items(items),
        context=context_text(context),
        orientation=orientation_text(context),
        count=len(items),
        language=language_line(language),
    )


def _input_score(item: _ScoreItem) -> InputScore:
    rewrite = (item.rewrite or "").strip() or None
    return InputScore(score=item.score, feedback=item.feedback, rewrite=rewrite)


def _rewritten(item: _RewriteItem) -> str:
    text = item.input.strip()
    if not text:
        raise OutputParseError("the rewritten input is blank")
    return text


@dataclass
class _Group:
    """The filter's work on the drafts of one context: each one's current version and score, its
    best-scoring version, and the failure that stopped it (a draft whose rewrite or rescoring
    failed stops there)."""

    context: Context | None
    llm: LLM
    threshold: float
    prompts: PromptSet | None
    stats: StageStats | None
    language: str | None = None
    current: dict[str, tuple[str, InputScore]] = field(default_factory=dict)
    best: dict[str, tuple[str, InputScore]] = field(default_factory=dict)
    failures: dict[str, ModelError] = field(default_factory=dict)

    async def score(self, texts: list[str]) -> list[InputScore | ModelError]:
        def prompt(positions: list[int]) -> str:
            items = [texts[i] for i in positions]
            return build_prompt(items, self.context, self.prompts, self.threshold, self.language)

        request = BatchRequest(LABEL, FilterReply, WHAT, prompt, _input_score)
        return await ask_batch(self.llm, request, len(texts), self.stats)

    async def rewrite(self, drafts: list[Draft]) -> list[str | ModelError]:
        pairs = [(self.current[d.id][0], self.current[d.id][1].feedback) for d in drafts]

        def prompt(positions: list[int]) -> str:
            chosen = [pairs[i] for i in positions]
            return build_rewrite_prompt(chosen, self.context, self.prompts, self.language)

        request = BatchRequest(REWRITE_LABEL, RewriteReply, REWRITE_WHAT, prompt, _rewritten)
        return await ask_batch(self.llm, request, len(pairs), self.stats)

    async def first(self, drafts: list[Draft]) -> list[Draft]:
        """Score every draft once; the ones scored (not failed) back."""
        verdicts = await self.score([d.input for d in drafts])
        for draft, verdict in zip(drafts, verdicts, strict=True):
            if isinstance(verdict, ModelError):
                drop_failed(draft, LABEL, verdict)
            else:
                self.current[draft.id] = (draft.input, verdict)
        self.best = dict(self.current)
        return [d for d in drafts if d.id in self.current]

    def failing(self, drafts: list[Draft]) -> list[Draft]:
        """The drafts still below the threshold that nothing stopped."""
        return [
            d
            for d in drafts
            if d.id not in self.failures and self.current[d.id][1].score < self.threshold
        ]

    async def retry(self, failing: list[Draft], attempt: int) -> None:
        """One round: rewrite the failing drafts (the critic's inline rewrite when it gave one)
        and score the rewrites."""
        proposed = {d.id: self.current[d.id][1].rewrite for d in failing}
        missing = [d for d in failing if not proposed[d.id]]
        if missing:
            for draft, text in zip(missing, await self.rewrite(missing), strict=True):
                if isinstance(text, ModelError):
                    self.failures[draft.id] = text
                else:
                    proposed[draft.id] = text
        failing = [d for d in failing if d.id not in self.failures]
        if not failing:
            return
        rewritten = [proposed[d.id] or "" for d in failing]
        rescored = await self.score(rewritten)
        for draft, text, verdict in zip(failing, rewritten, rescored, strict=True):
            if isinstance(verdict, ModelError):
                self.failures[draft.id] = verdict
            else:
                self.revise(draft, text, verdict, attempt)

    def revise(self, draft: Draft, text: str, verdict: InputScore, attempt: int) -> None:
        old_text, old = self.current[draft.id]
        draft.history.append(
            {
                "stage": LABEL,
                "input": old_text,
                "score": old.score,
                "feedback": old.feedback,
                "attempt": attempt,
            }
        )
        self.current[draft.id] = (text, verdict)
        if self.stats is not None:
            self.stats.note("rewritten")
        if verdict.score > self.best[draft.id][1].score:
            self.best[draft.id] = (text, verdict)

    def settle(self, drafts: list[Draft]) -> None:
        """Give each draft its best version; drop the ones that never reached the threshold."""
        for draft in drafts:
            text, verdict = self.best[draft.id]
            draft.input = text
            draft.input_quality = verdict.score
            draft.feedback = verdict.feedback or None
            if verdict.score < self.threshold:
                failure = self.failures.get(draft.id)
                if failure is not None:
                    drop_failed(draft, LABEL, failure)
                else:
                    draft.drop(LABEL, BELOW_THRESHOLD)


async def _filter_group(
    drafts: list[Draft],
    llm: LLM,
    config: FiltrationConfig,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    threshold = config.synthetic_input_quality_threshold
    group = _Group(drafts[0].context, llm, threshold, prompts, stats, draft_language(drafts[0]))
    drafts = await group.first(drafts)
    for attempt in range(1, config.max_quality_retries + 1):
        failing = group.failing(drafts)
        if not failing:
            break
        await group.retry(failing, attempt)
    group.settle(drafts)


async def run(
    drafts: Sequence[Draft],
    llm: LLM,
    config: FiltrationConfig,
    *,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
) -> list[Draft]:
    """Score, rewrite and keep-or-drop the live drafts; returns all drafts, dropped ones marked.

    Drafts are batched by context (one scoring request per context per round). ``history`` keeps the
    versions tried; ``input_quality`` is the kept version's own score; drop reasons are
    ``below_input_quality_threshold`` or ``model_error:<kind>``.
    """

    async def step(batch: list[Draft]) -> None:
        await _filter_group(batch, llm, config, prompts, stats)

    return await run_live_batches(drafts, MAX_BATCH, step, stats)


@dataclass(frozen=True)
class FilterStep:
    """The input filter as a step: the critic scores, rewrites, keeps or drops each live draft."""

    name: ClassVar[str] = LABEL
    llm: LLM
    config: FiltrationConfig
    prompts: PromptSet

    async def run(self, drafts: list[Draft], source: Source) -> list[Draft]:
        return await run(drafts, self.llm, self.config, prompts=self.prompts)


__all__ = [
    "BELOW_THRESHOLD",
    "FilterReply",
    "InputScore",
    "RewriteReply",
    "build_prompt",
    "build_rewrite_prompt",
    "FilterStep",
    "check_reply",
    "parse",
    "run",
]
