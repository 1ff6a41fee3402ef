"""What a stage did: items in, items out, items dropped by reason, and what its requests cost.

:class:`StageStats` is the one per-stage record: a stage fills it as it runs (``stats=``), and
:func:`count_stages` fills one per generation step from the drafts of the candidates a run used,
which is what the run's manifest and its table show (with the usage added by :meth:`add_usage`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field


class StageStats(BaseModel):
    """Counts for one stage, accumulated over every call that is given the same instance.

    ``items_in == items_out + sum(dropped.values())`` holds for every stage but inputs (contexts
    in, inputs out); ``requests`` counts the model calls the stage made (cached or not), ``notes``
    counts events that are not drops (for example ``rewritten``, ``reweighted``,
    ``reused_chunks``); tokens and cost come from the models' usage (:meth:`add_usage`).
    """

    stage: str
    items_in: int = 0
    items_out: int = 0
    dropped: Counter[str] = Field(default_factory=Counter)
    requests: int = 0
    notes: Counter[str] = Field(default_factory=Counter)
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def drop(self, reason: str, count: int = 1) -> None:
        """Record ``count`` items dropped for ``reason``."""
        self.dropped[reason] += count

    def note(self, event: str, count: int = 1) -> None:
        """Record ``count`` occurrences of an event that is not a drop."""
        self.notes[event] += count

    def tally(self, items: Iterable[Any]) -> None:
        """Count items that went through the stage: each one in, then out or dropped by its reason.

        Items are drafts (anything with ``kept`` and ``drop_reason``).
        """
        for item in items:
            self.items_in += 1
            if item.kept:
                self.items_out += 1
            else:
                self.drop(item.drop_reason or "unknown")

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())

    def merge(self, other: StageStats) -> None:
        """Add another instance's counts (items, drops, requests, tokens, cost) into this one."""
        self.items_in += other.items_in
        self.items_out += other.items_out
        self.dropped.update(other.dropped)
        self.requests += other.requests
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd
        self.notes.update(other.notes)

    def add_usage(self, usage: Mapping[str, float]) -> None:
        """Add the requests, tokens and cost of a usage row (keys as in the run's manifest)."""
        self.requests += int(usage.get("requests", 0))
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.cost_usd += float(usage.get("cost_usd", 0.0))

    def row(self) -> dict[str, Any]:
        """The item counts as a manifest row: stage, items in and out, drops by sorted reason."""
        return {
            "stage": self.stage,
            "items_in": self.items_in,
            "items_out": self.items_out,
            "dropped": dict(sorted(self.dropped.items())),
        }

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary, dropped reasons sorted."""
        return {
            **self.row(),
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "notes": dict(sorted(self.notes.items())),
        }


class Outcome(Protocol):
    """What counting needs of a draft: where it was dropped and why (None: kept)."""

    @property
    def dropped_at(self) -> str | None: ...
    @property
    def drop_reason(self) -> str | None: ...


def count_stages(
    stages: Sequence[str], drafts: Iterable[Outcome], contexts: int, final_stage: str = "dedup"
) -> list[StageStats]:
    """One record per step in ``stages`` (the first makes the drafts) and for ``final_stage``,
    counted from the drafts of the candidates used.

    The first step takes ``contexts`` in and gives its drafts out (a context whose request failed is
    its drop); every later one takes the drafts alive after the one before it, so each record's
    ``items_in`` is its ``items_out`` plus its drops. A drop at a stage not listed counts at
    ``final_stage``.
    """
    first, *later = stages
    records = {name: StageStats(stage=name) for name in [*later, final_stage]}
    made = StageStats(stage=first, items_in=contexts)
    for draft in drafts:
        where = draft.dropped_at
        if where == first:
            made.drop(draft.drop_reason or "unknown")
            continue
        made.items_out += 1
        if where is not None:
            records.get(where, records[final_stage]).drop(draft.drop_reason or "unknown")
    alive = made.items_out
    for record in records.values():
        record.items_in = alive
        record.items_out = alive = alive - record.dropped_total
    return [made, *records.values()]


def model_error_reason(exc: BaseException) -> str:
    """The drop reason for a model failure: ``model_error:<kind>`` (kind from synth.errors)."""
    kind = getattr(exc, "kind", type(exc).__name__)
    return f"model_error:{kind}"


__all__ = ["Outcome", "StageStats", "count_stages", "model_error_reason"]
