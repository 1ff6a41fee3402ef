"""What the run's stream works with: its target, one slot per activated candidate, its result."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synth.contexts.feed import Candidate
from synth.generate.draft import Draft

#: drop reason of drafts left over once N goldens are kept
NOT_NEEDED = "not_needed"


@dataclass(frozen=True)
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


def spare_counts(slots: Sequence[Slot], committed: Sequence[Slot]) -> dict[str, Any]:
    """The candidates started but not committed (spares the run ended without, or still under
    way): how many, and how many stopped after each step (``"none"``: before the first ended).
    Their requests are in the stages' counts; their drafts are not in the stages' items."""
    used = {id(slot) for slot in committed}
    spares = [s for s in slots if s.started and id(s) not in used]
    after = Counter(s.stages_done[-1] if s.stages_done else "none" for s in spares)
    return {"started": len(spares), "stopped_after": dict(sorted(after.items()))}


__all__ = ["NOT_NEEDED", "Slot", "StreamResult", "Target", "spare_counts"]
