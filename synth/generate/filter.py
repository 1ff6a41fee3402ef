"""The input filter: a critic scores inputs for self-containment and a clear objective.

All live inputs of one context are scored in one request. Those below
``synthetic_input_quality_threshold`` are rewritten with the critic's feedback and scored again, up
to ``max_quality_retries`` rounds. The critic is asked to include the rewrite in its scoring reply,
so a round usually costs one request (the rescoring); inputs it gave no rewrite for are rewritten in
one extra request. Each draft keeps its best-scoring version with that version's own score; one that
never reaches the threshold is dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, Field

from synth.data import Context
from synth.errors import ModelError, OutputParseError
from synth.generate._batch import BatchRequest, ask_batch, values_of
from synth.generate._text import context_text, feedback_items, tagged_list
from synth.generate.config import FiltrationConfig
from synth.generate.draft import Draft, drop_failed, live
from synth.generate.stats import StageStats
from synth.generate.templates import PromptSet, default_prompts
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict

LABEL = "filter"
REWRITE_LABEL = "filter_rewrite"
#: how a failed match of a scoring or a rewrite reply is described
WHAT = "the filter reply covers items"
REWRITE_WHAT = "the rewrite reply covers items"
BELOW_THRESHOLD = "below_input_quality_threshold"
#: inputs scored in one request at most (a context has max_goldens_per_context of them)
MAX_BATCH = 10


class InputScore(BaseModel):
    """The critic's verdict on one input, with its proposed rewrite when it scored low."""

    score: float = Field(ge=0.0, le=1.0)
    feedback: str = ""
    rewrite: str | None = None


class _ScoreItem(InputScore):
    index: int


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
) -> str:
    """The scoring prompt for the inputs of one context (rewrites asked below ``threshold``)."""
    return (prompts or default_prompts()).render(
        "filter",
        inputs=tagged_list("inputs", "input", list(inputs)),
        context=context_text(context),
        count=len(inputs),
        threshold=f"{threshold:g}",
    )


def check_reply(reply: FilterReply, n: int, raw: str = "") -> list[InputScore]:
    """The ``n`` scores in input order, matched as a batch reply is
    (:mod:`synth.generate._batch`); OutputParseError if one is left unmatched."""
    return values_of(reply, n, WHAT, _input_score, raw)


def parse(text: str, n: int) -> list[InputScore]:
    """Parse a scoring reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, FilterReply), n, raw=text)


def build_rewrite_prompt(
    items: Sequence[tuple[str, str]], context: Context | None, prompts: PromptSet | None = None
) -> str:
    """The rewrite prompt for ``(input, feedback)`` pairs of one context."""
    return (prompts or default_prompts()).render(
        "rewrite", items=feedback_items(items), context=context_text(context), count=len(items)
    )


def check_rewrite_reply(reply: RewriteReply, n: int, raw: str = "") -> list[str]:
    """The ``n`` rewritten inputs in order, matched as a batch reply is; OutputParseError if one
    is left unmatched or blank."""
    return values_of(reply, n, REWRITE_WHAT, _rewritten, raw)


def parse_rewrite(text: str, n: int) -> list[str]:
    """Parse a rewrite reply for ``n`` inputs; OutputParseError (with the raw text) otherwise."""
    return check_rewrite_reply(parse_verdict(text, RewriteReply), n, raw=text)


def _input_score(item: _ScoreItem) -> InputScore:
    rewrite = (item.rewrite or "").strip() or None
    return InputScore(score=item.score, feedback=item.feedback, rewrite=rewrite)


def _rewritten(item: _RewriteItem) -> str:
    text = item.input.strip()
    if not text:
        raise OutputParseError("the rewritten input is blank")
    return text


async def _rewrite(
    pairs: list[tuple[str, str]],
    context: Context | None,
    llm: LLM,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> list[str | ModelError]:
    request = BatchRequest(
        REWRITE_LABEL,
        RewriteReply,
        REWRITE_WHAT,
        lambda positions: build_rewrite_prompt([pairs[i] for i in positions], context, prompts),
        _rewritten,
    )
    return await ask_batch(llm, request, len(pairs), stats)


async def _score(
    texts: list[str],
    context: Context | None,
    llm: LLM,
    threshold: float,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> list[InputScore | ModelError]:
    request = BatchRequest(
        LABEL,
        FilterReply,
        WHAT,
        lambda positions: build_prompt([texts[i] for i in positions], context, prompts, threshold),
        _input_score,
    )
    return await ask_batch(llm, request, len(texts), stats)


async def _filter_group(
    drafts: list[Draft],
    llm: LLM,
    config: FiltrationConfig,
    prompts: PromptSet | None,
    stats: StageStats | None,
) -> None:
    context = drafts[0].context
    threshold = config.synthetic_input_quality_threshold
    first = await _score([d.input for d in drafts], context, llm, threshold, prompts, stats)
    current: dict[str, tuple[str, InputScore]] = {}
    for draft, verdict in zip(drafts, first, strict=True):
        if isinstance(verdict, ModelError):
            drop_failed(draft, LABEL, verdict)
        else:
            current[draft.id] = (draft.input, verdict)
    drafts = [d for d in drafts if d.id in current]
    best = dict(current)
    failures: dict[str, ModelError] = {}  # a draft whose rewrite or rescoring failed stops there
    for attempt in range(1, config.max_quality_retries + 1):
        failing = [d for d in drafts if d.id not in failures and current[d.id][1].score < threshold]
        if not failing:
            break
        proposed = {d.id: current[d.id][1].rewrite for d in failing}
        missing = [d for d in failing if not proposed[d.id]]
        if missing:
            pairs = [(current[d.id][0], current[d.id][1].feedback) for d in missing]
            texts = await _rewrite(pairs, context, llm, prompts, stats)
            for draft, text in zip(missing, texts, strict=True):
                if isinstance(text, ModelError):
                    failures[draft.id] = text
                else:
                    proposed[draft.id] = text
        failing = [d for d in failing if d.id not in failures]
        if not failing:
            break
        rewritten = [proposed[d.id] or "" for d in failing]
        rescored = await _score(rewritten, context, llm, threshold, prompts, stats)
        for draft, text, verdict in zip(failing, rewritten, rescored, strict=True):
            if isinstance(verdict, ModelError):
                failures[draft.id] = verdict
                continue
            old_text, old = current[draft.id]
            draft.history.append(
                {
                    "stage": LABEL,
                    "input": old_text,
                    "score": old.score,
                    "feedback": old.feedback,
                    "attempt": attempt,
                }
            )
            current[draft.id] = (text, verdict)
            if stats is not None:
                stats.note("rewritten")
            if verdict.score > best[draft.id][1].score:
                best[draft.id] = (text, verdict)
    for draft in drafts:
        text, verdict = best[draft.id]
        draft.input = text
        draft.input_quality = verdict.score
        draft.feedback = verdict.feedback or None
        if verdict.score < threshold:
            failure = failures.get(draft.id)
            if failure is not None:
                drop_failed(draft, LABEL, failure)
            else:
                draft.drop(LABEL, BELOW_THRESHOLD)


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
    todo = live(list(drafts))
    groups: dict[str | None, list[Draft]] = {}
    for draft in todo:
        groups.setdefault(draft.context.id if draft.context else None, []).append(draft)
    batches = [g[i : i + MAX_BATCH] for g in groups.values() for i in range(0, len(g), MAX_BATCH)]
    await asyncio.gather(*(_filter_group(b, llm, config, prompts, stats) for b in batches))
    if stats is not None:
        stats.tally(todo)
    return list(drafts)


__all__ = [
    "BELOW_THRESHOLD",
    "FilterReply",
    "InputScore",
    "RewriteReply",
    "build_prompt",
    "build_rewrite_prompt",
    "check_reply",
    "check_rewrite_reply",
    "parse",
    "parse_rewrite",
    "run",
]
