"""Contexts guessed before the critic's verdicts, and their inputs asked ahead (issue 22).

While the critic scores a batch of seeds, :class:`~synth.contexts.seed_feed.DocsFeed` finds their
neighbours in its reader thread; with a :class:`Guesses` it also groups them there as if every seed
were accepted, each batch on top of the claims of the ones guessed before it, and hands each
guessed context to the warm (the run's first step asking its request ahead, through the response
cache). A candidate whose context was guessed right joins that request; a guess the verdicts do
not bear out (a rejected seed, a neighbour a later draw took) costs one request, nothing else.
A context whose neighbours depend on which chunks are claimed first (it comes out otherwise when
every chunk is free to join it: a corpus too small for disjoint contexts) is not asked ahead.
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
#: the notes of the group row: contexts whose inputs were asked ahead, those the verdicts made,
#: and those not asked ahead because their neighbours depended on the order of the claims
ASKED, USED, CONTENDED = "inputs_asked_ahead", "asked_ahead_used", "not_asked_ahead_contended"


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
        if self._closed or self.counts[ASKED] >= self.limit:
            return  # none of them would be asked (read on the loop's side: at worst one more)
        used |= self._claimed
        before = set(used)
        try:
            result = group_contexts(
                seeds, store, config, used=used, allow_reuse=reuse, prefetched=ahead
            )
            # the same seeds with every chunk free to join them: a context that comes out the
            # same holds whoever claims what before the verdicts, one that does not is a guess
            # on the order of the claims (a corpus too small for disjoint contexts), not asked
            free = group_contexts(
                seeds, store, config, used=set(before), allow_reuse=True, prefetched=ahead
            )
        except Exception:  # noqa: BLE001 - a guess only: grouping itself reports what failed
            return
        self._claimed |= used - before
        settled = {tuple(c.chunk_ids) for c in free.contexts}
        steady = [c for c in result.contexts if tuple(c.chunk_ids) in settled]
        loop.call_soon_threadsafe(self._start, steady, len(result.contexts) - len(steady))

    def grouped(self, context: Context) -> None:
        """A context the verdicts made: counted when it was guessed (its inputs asked ahead)."""
        if context.id in self._ids:
            self.counts[USED] += 1

    def _start(self, contexts: list[Context], contended: int = 0) -> None:
        if contended:  # the guesses not asked: their neighbours depend on the claims' order
            self.counts[CONTENDED] += contended
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


__all__ = ["ASKED", "CONTENDED", "USED", "Guesses", "Warm"]
