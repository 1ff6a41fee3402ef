"""Contexts guessed before the critic's verdicts, and their inputs asked ahead (issue 22).

While the critic scores a batch of seeds, :class:`~synth.contexts.seed_feed.DocsFeed` finds their
neighbours in its reader thread; with a :class:`Guesses` it also groups them there as if every seed
were accepted, each batch on top of the claims of the ones guessed before it, and hands each
guessed context to the warm (the run's first step asking its request ahead, through the response
cache). A candidate whose context was guessed right joins that request; a guess the verdicts do
not bear out (a rejected seed, a neighbour a later draw took) costs one request, nothing else.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence

from synth.contexts.config import ContextConstructionConfig
from synth.contexts.group import NeighbourStore, Prefetched, group_contexts
from synth.data import Chunk, Context

#: asks, ahead, the request the run's first step will send for a context the critic may accept
Warm = Callable[[Context], Awaitable[None]]
#: the notes of the group row: contexts whose inputs were asked ahead, and those the verdicts made
ASKED, USED = "inputs_asked_ahead", "asked_ahead_used"


class Guesses:
    """The guesses of one feed (see the module): at most ``limit`` contexts are warmed (those the
    first wave is expected to start; the spares' inputs are asked when the run starts them)."""

    def __init__(self, warm: Warm, limit: int) -> None:
        self.warm = warm
        self.limit = limit
        self.counts: Counter[str] = Counter()
        self._claimed: set[str] = set()  # chunks the guessed contexts claimed (reader thread)
        self._ids: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    def guess(
        self,
        seeds: Sequence[Chunk],
        store: NeighbourStore,
        config: ContextConstructionConfig,
        ahead: Prefetched,
        used: set[str],
        reuse: bool,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """In the feed's reader thread, batches in the order they were sent: the contexts of
        ``seeds`` if all are accepted (``used``: the run's claims when the batch was sent), each
        handed to the warm on ``loop``."""
        used |= self._claimed
        before = set(used)
        try:
            result = group_contexts(
                seeds, store, config, used=used, allow_reuse=reuse, prefetched=ahead
            )
        except Exception:  # noqa: BLE001 - a guess only: grouping itself reports what failed
            return
        self._claimed |= used - before
        loop.call_soon_threadsafe(self._start, result.contexts)

    def grouped(self, context: Context) -> None:
        """A context the verdicts made: counted when it was guessed (its inputs asked ahead)."""
        if context.id in self._ids:
            self.counts[USED] += 1

    def _start(self, contexts: list[Context]) -> None:
        if self._closed:
            return
        for context in contexts:
            if self.counts[ASKED] >= self.limit:
                return
            self._ids.add(context.id)
            self.counts[ASKED] += 1
            task = asyncio.get_running_loop().create_task(self._warm_one(context))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _warm_one(self, context: Context) -> None:
        try:
            await self.warm(context)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001, S110 - the candidate's own request reports a failure
            pass

    async def aclose(self) -> None:
        """Cancel the requests asked ahead that are still out; start no more."""
        self._closed = True
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


__all__ = ["ASKED", "USED", "Guesses", "Warm"]
