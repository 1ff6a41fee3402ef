"""The context critic: labels seed chunks, several per call, and synth computes each one's score.

The critic does not give a number. For each passage it writes its reason first, then labels:
whether the passage is prose (running text a question can be asked about) and, when it is not,
which disqualifier it is (:data:`DISQUALIFIERS`: a table of contents, an index, a reference list,
navigation, boilerplate, table art without text), then three graded criteria, each 0 to 3
(``self_contained``, ``informative``, ``coherent``). The score is computed here from the labels
(:attr:`ContextScore.quality`): 0 for a passage that is not prose, else the mean grade over 3.
The threshold is never shown to the model, and the prompt carries a few labelled examples that
anchor the grades.

The critic sees what it needs to judge, not the whole chunk: each passage is cut after its first
:data:`CRITIC_WORDS` words (marked ``[...]``); the prose filter (:mod:`synth.contexts.prose`) has
already kept out what plain code can tell is not prose.

``score_contexts`` labels candidates in batches of ``contexts_per_critic_call``. The stage around
it (drawing seeds, replacing the rejected ones, grouping the accepted) is
:class:`~synth.contexts.seed_feed.DocsFeed`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

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
#: what a passage that is not prose may be; each is also the drop reason of such a seed
DISQUALIFIERS = (
    "table_of_contents",
    "index",
    "reference_list",
    "navigation",
    "boilerplate",
    "table_art",
)
#: the drop reason of a seed labelled not prose without a disqualifier named
NOT_PROSE = "not_prose"
#: the graded criteria, each 0..MAX_GRADE
CRITERIA = ("self_contained", "informative", "coherent")
MAX_GRADE = 3
#: words of each passage the critic is shown (the rest is cut, marked ``[...]``)
CRITIC_WORDS = 150

Disqualifier = Literal[
    "none",
    "table_of_contents",
    "index",
    "reference_list",
    "navigation",
    "boilerplate",
    "table_art",
]


class ContextScore(BaseModel):
    """The critic's labels for one passage; ``quality`` is the score synth computes from them.

    Fields are in the order the model writes them: its reason first, then the labels.
    """

    reason: str = ""
    prose: bool
    disqualifier: Disqualifier = "none"
    self_contained: int = Field(ge=0, le=MAX_GRADE)
    informative: int = Field(ge=0, le=MAX_GRADE)
    coherent: int = Field(ge=0, le=MAX_GRADE)

    @property
    def quality(self) -> float:
        """0 for a passage that is not prose, else the mean of the grades over ``MAX_GRADE``."""
        if not self.prose:
            return 0.0
        grades = (self.self_contained, self.informative, self.coherent)
        return sum(grades) / (MAX_GRADE * len(grades))

    @property
    def drop_reason(self) -> str | None:
        """Why the passage is disqualified (its disqualifier, or ``not_prose``); None if prose."""
        if self.prose:
            return None
        return NOT_PROSE if self.disqualifier == "none" else self.disqualifier

    def passes(self, config: ContextConstructionConfig) -> bool:
        """Whether the passage is prose and its score is above ``context_quality_threshold`` (at
        the threshold fails)."""
        return self.prose and self.quality > config.context_quality_threshold

    def outcome(self, config: ContextConstructionConfig) -> str | None:
        """The seed's drop reason under ``config`` (a disqualifier, ``not_prose`` or
        ``below_quality_threshold``), or None when it passes."""
        if self.drop_reason is not None:
            return self.drop_reason
        return None if self.passes(config) else BELOW_THRESHOLD


class _Item(BaseModel):
    index: int
    reason: str = Field(description="what the passage is and what a reader learns from it")
    prose: bool
    disqualifier: Disqualifier
    self_contained: int = Field(ge=0, le=MAX_GRADE)
    informative: int = Field(ge=0, le=MAX_GRADE)
    coherent: int = Field(ge=0, le=MAX_GRADE)


class CriticReply(BaseModel):
    """The critic's reply schema: one entry per passage, in order."""

    scores: list[_Item]


def excerpt(text: str, words: int = CRITIC_WORDS) -> str:
    """``text`` cut after its first ``words`` words, marked ``[...]`` when cut (its line breaks
    kept: they show the passage's shape)."""
    count = 0
    for position, char in enumerate(text):
        if not char.isspace() and (position == 0 or text[position - 1].isspace()):
            count += 1
            if count > words:
                return text[:position].rstrip() + " [...]"
    return text


def build_prompt(chunks: Sequence[Chunk | str], prompts: PromptSet | None = None) -> str:
    """The critic prompt for one batch of candidate chunks (or their texts), each cut to what the
    critic needs (:func:`excerpt`)."""
    texts = [excerpt(c.text if isinstance(c, Chunk) else c) for c in chunks]
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


def is_critic_drop(reason: str) -> bool:
    """Whether ``reason`` is one the critic's labels give (a disqualifier, ``not_prose``, or
    ``below_quality_threshold``)."""
    return reason in (BELOW_THRESHOLD, NOT_PROSE, *DISQUALIFIERS)


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
    """Label candidates, ``contexts_per_critic_call`` per request, batches concurrently.

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
    "CRITERIA",
    "CRITIC_WORDS",
    "DISQUALIFIERS",
    "MAX_GRADE",
    "NOT_PROSE",
    "ContextScore",
    "CriticReply",
    "ScoredSeed",
    "build_prompt",
    "check_reply",
    "dump_score",
    "excerpt",
    "is_critic_drop",
    "is_failed_score",
    "load_score",
    "parse",
    "score_contexts",
]
