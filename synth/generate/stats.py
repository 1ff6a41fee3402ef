"""What a stage did: items in, items out, items dropped by reason."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field


class StageStats(BaseModel):
    """Counts for one stage, accumulated over every call that is given the same instance.

    ``items_in == items_out + sum(dropped.values())`` holds for every stage; ``requests`` counts the
    model calls the stage made (cached or not), ``notes`` counts events that are not drops (for
    example ``rewritten``, ``reweighted``, ``reused_chunks``).
    """

    stage: str
    items_in: int = 0
    items_out: int = 0
    dropped: Counter[str] = Field(default_factory=Counter)
    requests: int = 0
    notes: Counter[str] = Field(default_factory=Counter)

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
        """Add another instance's counts into this one."""
        self.items_in += other.items_in
        self.items_out += other.items_out
        self.dropped.update(other.dropped)
        self.requests += other.requests
        self.notes.update(other.notes)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary, dropped reasons sorted."""
        return {
            "stage": self.stage,
            "items_in": self.items_in,
            "items_out": self.items_out,
            "dropped": dict(sorted(self.dropped.items())),
            "requests": self.requests,
            "notes": dict(sorted(self.notes.items())),
        }


def model_error_reason(exc: BaseException) -> str:
    """The drop reason for a model failure: ``model_error:<kind>`` (kind from synth.errors)."""
    kind = getattr(exc, "kind", type(exc).__name__)
    return f"model_error:{kind}"


__all__ = ["StageStats", "model_error_reason"]
