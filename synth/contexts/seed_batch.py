"""A batch of seeds the critic scores in one request, and how many batches a feed draws ahead."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from synth._ids import joined_hash
from synth.contexts.critic import ContextScore
from synth.contexts.group import Prefetched
from synth.data import Chunk
from synth.errors import ModelError


@dataclass
class SeedBatch:
    """Seeds scored by the critic in one request, and what became of each."""

    index: int
    seeds: list[Chunk]
    start: int  # draw position of the first seed
    sent: bool = False
    scores: list[ContextScore | str] | None = None  # a score, or a drop reason
    grouped: bool = False
    outcome: dict[str, str] = field(default_factory=dict)  # seed id -> "ok" or drop reason
    failed: dict[str, ModelError] = field(default_factory=dict)  # seed id -> its failed request
    ahead: asyncio.Future[Prefetched] | None = None  # the store's answers, read while scored

    @property
    def key(self) -> str:
        return f"batch{self.index}:" + joined_hash((c.id for c in self.seeds), 12)


def lookahead_batches(contexts_wanted: int, per_call: int) -> int:
    """How many critic batches are drawn before the first is grouped: enough for the contexts a
    run is expected to need, plus one, so the first wave of requests goes out at once."""
    return math.ceil(max(contexts_wanted, 1) / per_call) + 1


__all__ = ["SeedBatch", "lookahead_batches"]
