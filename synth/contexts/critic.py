"""The context critic: scores seed chunks for clarity, depth, structure and relevance, several per call.

``score_contexts`` scores candidates in batches of ``contexts_per_critic_call``. The stage around it
(drawing seeds, replacing the rejected ones, grouping the accepted) is
:class:`~synth.contexts.seed_feed.DocsFeed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from synth.contexts.config import ContextConstructionConfig
from synth.data import Chunk
from synth.errors import ModelError
from synth.llm.base import LLM
from synth.llm.structured import parse_verdict
from synth.stage.batch import BatchRequest, ask_batch, values_of
from synth.stage.stats import StageStats
from synth.stage.templates import PromptSet, default_prompts
from synth.stage.text import tagged_list

LABEL = "critic"
#: how a failed match of the critic's reply is described
WHAT = "critic scored passages"
BELOW_THRESHOLD = "below_quality_threshold"


class ContextScore(BaseModel):
    """One candidate's scores, each 0..1; ``quality`` is their mean."""

    clarity: float = Field(ge=0.0, le=1.0)
    depth: float = Field(ge=0.0, le=1.0)
    structure: float = Field(ge=0.0, le=1.0)
    relevance: float = Field(ge=0.0, le=1.0)
    reason: str = ""

    @property
    def quality(self) -> float:
        return (self.clarity + self.depth + self.structure + self.relevance) / 4.0

    def passes(self, config: ContextConstructionConfig) -> bool:
        """Whether the mean is above ``context_quality_threshold`` (at the threshold fails)."""
        return self.quality > config.context_quality_threshold


class _Item(ContextScore):
    index: int


class CriticReply(BaseModel):
    """The critic's reply schema: one entry per passage, in order."""

    scores: list[_Item]


def build_prompt(chunks: Sequence[Chunk | str], prompts: PromptSet | None = None) -> str:
    """The critic prompt for one batch of candidate chunks (or their texts)."""
    texts = [c.text if isinstance(c, Chunk) else c for c in chunks]
    return (prompts or default_prompts()).render(
        "context_critic", chunks=tagged_list("passages", "passage", texts), count=len(texts)
    )


def check_reply(reply: CriticReply, n: int, raw: str = "") -> list[ContextScore]:
    """The ``n`` scores of a parsed reply, in passage order, matched as a batch reply is
    (:mod:`synth.stage.batch`); OutputParseError if one is left unmatched."""
    return values_of(reply, n, WHAT, _score, raw)


def parse(text: str, n: int) -> list[ContextScore]:
    """Parse a critic reply for ``n`` passages; OutputParseError (with the raw text) otherwise."""
    return check_reply(parse_verdict(text, CriticReply), n, raw=text)


def _score(item: _Item) -> ContextScore:
    return ContextScore.model_validate(item.model_dump(exclude={"index"}))


async def _score_batch(
    batch: Sequence[Chunk], llm: LLM, prompts: PromptSet | None, stats: StageStats | None
) -> list[ContextScore | ModelError]:
    request = BatchRequest(
        LABEL,
        CriticReply,
        WHAT,
        lambda positions: build_prompt([batch[i] for i in positions], prompts),
        _score,
    )
    return await ask_batch(llm, request, len(batch), stats)


async def score_contexts(
    candidates: Sequence[Chunk],
    llm: LLM,
    config: ContextConstructionConfig,
    *,
    prompts: PromptSet | None = None,
    stats: StageStats | None = None,
) -> list[ContextScore | ModelError]:
    """Score candidates, ``contexts_per_critic_call`` per request, batches concurrently.

    Returns one entry per candidate, in order: its :class:`ContextScore`, or the
    :class:`~synth.errors.ModelError` that left it unscored (never raised). A reply that misnumbers
    its entries keeps what it can match; the rest is asked again (see ``synth.stage.batch``).
    """
    size = config.contexts_per_critic_call
    batches = [list(candidates[i : i + size]) for i in range(0, len(candidates), size)]
    results = await asyncio.gather(*(_score_batch(b, llm, prompts, stats) for b in batches))
    return [score for result in results for score in result]


@dataclass
class ScoredSeed:
    """A seed chunk that passed the critic (``score`` is None when no critic was used); grouping
    puts the verdict in its context's metadata (with ``attempts``, the candidates tried for the
    seed's place, when known)."""

    chunk: Chunk
    score: ContextScore | None = None
    attempts: int | None = None


def is_failed_score(score: object) -> bool:
    """A seed's outcome that is a failed request (not journaled: a rerun asks again)."""
    return isinstance(score, str) and score.startswith("model_error")


def dump_score(score: ContextScore | str) -> Any:
    """A seed's outcome as the critic's journal keeps it."""
    return score.model_dump() if isinstance(score, ContextScore) else score


def load_score(value: Any) -> ContextScore | str:
    """A seed's outcome read back from the critic's journal."""
    return ContextScore.model_validate(value) if isinstance(value, dict) else str(value)


__all__ = [
    "BELOW_THRESHOLD",
    "ContextScore",
    "CriticReply",
    "ScoredSeed",
    "build_prompt",
    "check_reply",
    "dump_score",
    "is_failed_score",
    "load_score",
    "parse",
    "score_contexts",
]
