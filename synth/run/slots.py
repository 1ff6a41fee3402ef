"""What the run's stream works with: its target, one slot per activated candidate, its result."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from synth.contexts.feed import Candidate
from synth.generate.draft import Draft

#: drop reason of drafts left over once N goldens are kept
NOT_NEEDED = "not_needed"


@dataclass
class Target:
    """What the run aims for: ``num_goldens`` goldens, or else ``contexts`` contexts' worth."""

    per_context: int
    num_goldens: int | None = None
    contexts: int | None = None
    #: goldens each file gives while it can (its coverage target), or None: take them in order
    quotas: dict[str, int] | None = None


@dataclass
class Slot:
    """An activated candidate: its expected yield once started and, when done, its drafts (with
    their vectors, when the runner made them, as ``offers``: the kept drafts in order)."""

    candidate: Candidate
    expected: int
    stages_done: list[str] = field(default_factory=list)
    drafts: list[Draft] | None = None
    offers: list[tuple[Draft, list[float] | None]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    @property
    def started(self) -> bool:
        """Whether its stages were started (a slot parked by the quotas is not, yet)."""
        return self.task is not None


@dataclass
class StreamResult:
    """What the controller delivered and what it went through to get there."""

    goldens: list[Draft]
    committed: list[Slot]  # candidates whose drafts were offered, in order
    dedup_dropped: int = 0
    not_needed: int = 0
    too_easy: int = 0
    shortfall: list[str] = field(default_factory=list)  # why fewer than asked, when so


__all__ = ["NOT_NEEDED", "Slot", "StreamResult", "Target"]
