"""What a judge must reply (strict schemas) and the fixed formula that turns a verdict into a score.

Every schema puts the judge's reason (or its evidence) before its verdict: strict decoding writes
fields in order, so the verdict is written after the reasoning, not justified afterwards. A claim's
verdict is one of two shapes: a supported claim gives only its evidence quote (synth checks that it
is in the contexts), an unsupported one its reason too, so the judge writes a reason only where a
user needs one and the reply is about a third shorter.

Each ``score_*`` function is pure: it takes the parsed verdict (and what it must match, such as the
number of contexts) and returns a :class:`Scored`. A verdict that parses but breaks a rule the
schema cannot express (a rating out of range, a verdict per context missing) raises
:class:`~synth.errors.OutputParseError` with the raw reply.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from synth.errors import OutputParseError


def _one_value_enum(schema: dict[str, Any]) -> None:
    """A one-value verdict as ``enum``: strict modes all take ``enum``, not all ``const``."""
    schema["enum"] = [schema.pop("const")]


class SupportedClaim(BaseModel):
    """A claim the contexts support: its number (``index``, as listed), the evidence quoted from
    the contexts, then the verdict. No reason: the quote is the reason, and synth checks it."""

    index: int = Field(ge=1)
    evidence: str = ""
    supported: Literal[True] = Field(json_schema_extra=_one_value_enum)


class UnsupportedClaim(BaseModel):
    """A claim the contexts do not support: its number, the closest passage (or none), why it is
    not supported (the reason a user reads beside the score), then the verdict."""

    index: int = Field(ge=1)
    evidence: str = ""
    reason: str = ""
    supported: Literal[False] = Field(json_schema_extra=_one_value_enum)


#: one claim's verdict: only an unsupported claim costs the judge a reason
ClaimVerdict = SupportedClaim | UnsupportedClaim


class FaithfulnessVerdict(BaseModel):
    """Two steps in one reply: the answer's claims, each standing alone, then one verdict each."""

    claims: list[str]
    verdicts: list[SupportedClaim | UnsupportedClaim]


class RatingVerdict(BaseModel):
    reason: str = ""
    score: int


class ContextVerdict(BaseModel):
    index: int
    reason: str = ""
    relevant: bool


class ContextPrecisionVerdict(BaseModel):
    verdicts: list[ContextVerdict]


class Statement(BaseModel):
    statement: str
    reason: str = ""
    attributable: bool


class ContextRecallVerdict(BaseModel):
    statements: list[Statement]


class CorrectnessVerdict(BaseModel):
    reason: str = ""
    true_positives: list[str]
    false_positives: list[str]
    false_negatives: list[str]


class PreferenceVerdict(BaseModel):
    reason: str = ""
    winner: Literal["answer_a", "answer_b", "tie"]


@dataclass
class Scored:
    """A score (NaN when undefined) with the counts it was computed from."""

    score: float
    details: dict[str, Any] = field(default_factory=dict)
    undefined: bool = False


def score_faithfulness(
    verdict: FaithfulnessVerdict, contexts: Sequence[str] = (), raw: str = ""
) -> Scored:
    """Supported claims / claims made; an answer with no claim has no faithfulness.

    A claim counts as supported only when its verdict says so and its evidence quote is found in
    the contexts (exactly, or nearly: :func:`synth.generate.citations.locate`); a supporting
    verdict whose quote is not there counts against the claim (``n_unlocated``), since nothing
    shows the contexts say it. Every claim needs exactly one verdict, numbered 1..n
    (OutputParseError otherwise).
    """
    # here, not with the module: the generate package is not needed before the judges' first
    # requests leave, only once a reply is back (its import then overlaps the wait for the rest)
    from synth.generate.citations import SourceChunk, locate_all

    n_claims = len(verdict.claims)
    numbers = sorted(v.index for v in verdict.verdicts)
    if numbers != list(range(1, n_claims + 1)):
        raise OutputParseError(
            f"expected one verdict per claim, claims 1..{n_claims}, got {numbers}", raw=raw
        )
    sources = [SourceChunk(chunk_id=str(i), text=text) for i, text in enumerate(contexts, 1)]
    claimed = [v for v in verdict.verdicts if v.supported]
    found = locate_all([v.evidence for v in claimed], sources) if sources else []
    # a whole context quoted counts even when it is too short for locate to accept
    whole = {" ".join(text.split()) for text in contexts}
    located = [
        v.index
        for v, where in zip(claimed, found or [None] * len(claimed), strict=True)
        if v.evidence.strip() and (where is not None or " ".join(v.evidence.split()) in whole)
    ]
    unlocated = sorted(v.index for v in claimed if v.index not in located)
    details = {
        "n_claims": n_claims,
        "n_supported": len(located),
        "n_unlocated": len(unlocated),
        "unlocated_claims": unlocated,
    }
    if n_claims == 0:
        return Scored(math.nan, details, undefined=True)
    return Scored(len(located) / n_claims, details)


def score_rating(verdict: RatingVerdict, scale: int, raw: str) -> Scored:
    """``(rating - 1) / (scale - 1)`` for an integer rating from 1 to ``scale``."""
    if not 1 <= verdict.score <= scale:
        raise OutputParseError(f"rating {verdict.score} is outside 1..{scale}", raw=raw)
    return Scored((verdict.score - 1) / (scale - 1), {"rating": verdict.score, "scale": scale})


def score_context_precision(verdict: ContextPrecisionVerdict, n_contexts: int, raw: str) -> Scored:
    """Average precision of the relevance verdicts in retrieval order (0 when none is relevant)."""
    indexes = [v.index for v in verdict.verdicts]
    if indexes != list(range(1, n_contexts + 1)):
        raise OutputParseError(
            f"expected one verdict per context, indexes 1..{n_contexts} in order, got {indexes}",
            raw=raw,
        )
    relevant = [v.relevant for v in verdict.verdicts]
    hits = 0
    total = 0.0
    for rank, is_relevant in enumerate(relevant, start=1):
        if is_relevant:
            hits += 1
            total += hits / rank
    details = {"n_contexts": n_contexts, "n_relevant": hits}
    return Scored(total / hits if hits else 0.0, details)


def score_context_recall(verdict: ContextRecallVerdict) -> Scored:
    """Reference statements attributable to the contexts / reference statements."""
    n = len(verdict.statements)
    n_attributable = sum(s.attributable for s in verdict.statements)
    details = {"n_statements": n, "n_attributable": n_attributable}
    if n == 0:
        return Scored(math.nan, details, undefined=True)
    return Scored(n_attributable / n, details)


def score_answer_correctness(verdict: CorrectnessVerdict) -> Scored:
    """``TP / (TP + (FP + FN) / 2)`` over statements."""
    tp = len(verdict.true_positives)
    fp = len(verdict.false_positives)
    fn = len(verdict.false_negatives)
    details = {"tp": tp, "fp": fp, "fn": fn}
    if tp + fp + fn == 0:
        return Scored(math.nan, details, undefined=True)
    return Scored(tp / (tp + (fp + fn) / 2), details)


def preference_side(winner: str, a_first: bool) -> str:
    """Return ``"a"``, ``"b"`` or ``"tie"``: the verdict's winner in the caller's naming."""
    if winner == "tie":
        return "tie"
    shown_first = winner == "answer_a"
    return "a" if shown_first == a_first else "b"


def score_preference(a_first: str, b_first: str) -> Scored:
    """1 for answer a, 0 for answer b, 0.5 for a tie; a verdict that flips with the order is a tie."""
    consistent = a_first == b_first
    winner = a_first if consistent else "tie"
    score = {"a": 1.0, "b": 0.0, "tie": 0.5}[winner]
    details = {
        "winner_when_a_first": a_first,
        "winner_when_b_first": b_first,
        "consistent": consistent,
        "winner": winner,
    }
    return Scored(score, details)


__all__ = [
    "ClaimVerdict",
    "ContextPrecisionVerdict",
    "ContextRecallVerdict",
    "CorrectnessVerdict",
    "FaithfulnessVerdict",
    "PreferenceVerdict",
    "RatingVerdict",
    "Scored",
    "SupportedClaim",
    "UnsupportedClaim",
    "preference_side",
    "score_answer_correctness",
    "score_context_precision",
    "score_context_recall",
    "score_faithfulness",
    "score_preference",
    "score_rating",
]
