"""A step run ahead of the step before it, kept for each draft where that changes nothing.

The default chain waits for each request before the next: critic, inputs, filter, evolve,
expected. An input the filter keeps as it is (nearly all of them) is evolved the same whether the
evolution is asked for before or after the filter's verdict, so the runner asks for both at once
(:data:`synth.generate.steps.RUNS_AHEAD` names the pairs) and saves a round trip per golden. Once
both are back, each draft of the earlier step's output is settled on its own:

- kept, and changed by the earlier step in nothing but the fields it may change (the filter's
  score and feedback), none of which the later step wrote: the run made ahead is applied to it,
  field by field, which is exactly what running the later step afterwards would have given;
- kept but changed otherwise (the filter rewrote it): the later step runs on it again, now;
- dropped: the run made ahead is thrown away (its request, when it was sent, paid for nothing).

Only steps that treat each draft on its own may run ahead (evolve does: its random choices are
drawn per draft and its checks judge each draft alone, though a context's drafts share a request). The later step's gate is passed before it starts, so a spare candidate still
waits until it is needed; when the earlier step drops every draft or fails, the run ahead is
cancelled. The outcome counts (kept, redone, wasted) go into the later step's manifest row.
"""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from synth.generate.base import Source, Step
from synth.generate.draft import Draft

#: the outcome notes of a run made ahead, by draft
KEPT, REDONE, WASTED = "ahead_kept", "ahead_redone", "ahead_wasted"


def _state(draft: Draft) -> dict[str, Any]:
    """What a step may have changed in ``draft`` (its context is shared and never changed)."""
    state = draft.model_dump(exclude={"context"})
    state["drop_raw"] = draft.drop_raw
    return state


def _changed(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {name for name, value in after.items() if before.get(name) != value}


def _copy(draft: Draft) -> Draft:
    """A copy of ``draft`` to run ahead on: its own lists and dicts, the same context."""
    return copy.deepcopy(draft, {id(draft.context): draft.context})


@dataclass
class Ahead:
    """``step`` started on copies of a candidate's live drafts before the step ahead of it ended.

    ``may_change``: the fields the earlier step may change in a draft without making the run
    made ahead of it stale. :meth:`settle` gives the drafts as running ``step`` after it would."""

    step: Step
    may_change: frozenset[str]
    task: asyncio.Task[list[Draft]]
    before: dict[str, dict[str, Any]]
    counts: Counter[str] = field(default_factory=Counter)
    #: set once the later step's gate let it start (the candidate is needed)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def settle(self, drafts: list[Draft], source: Source) -> list[Draft]:
        """``drafts`` (the earlier step's output) as ``step`` would leave them, in place."""
        if not any(d.kept for d in drafts):
            self.counts[WASTED] += len(self.before)
            self.discard()
            return drafts
        made = {d.id: d for d in await self.task}
        again: list[Draft] = []
        for draft in drafts:
            theirs, before = made.get(draft.id), self.before.get(draft.id)
            if not draft.kept:
                self.counts[WASTED] += theirs is not None
                continue
            if theirs is None or before is None:
                again.append(draft)
                continue
            ours = _changed(before, _state(draft))
            written = _changed(before, _state(theirs))
            if ours <= self.may_change and not ours & written:
                for name in written:
                    setattr(draft, name, getattr(theirs, name))
                self.counts[KEPT] += 1
            else:
                self.counts[REDONE] += 1
                again.append(draft)
        if again:
            redone = {d.id: d for d in await self.step.run(again, source)}
            drafts = [redone.get(d.id, d) for d in drafts]
        return drafts

    def discard(self) -> None:
        """Cancel the run made ahead (its result, or its failure, is not wanted)."""
        self.task.cancel()
        if self.task.done() and not self.task.cancelled():
            self.task.exception()  # retrieved, so it is not reported as lost


def run_ahead(
    step: Step,
    drafts: list[Draft],
    source: Source,
    may_change: Collection[str],
    gate: Callable[[], Awaitable[None]],
) -> Ahead:
    """Start ``step`` on copies of the live ``drafts`` once ``gate()`` lets it; see :class:`Ahead`."""
    live = [d for d in drafts if d.kept]
    copies = [_copy(d) for d in live]

    started = asyncio.Event()

    async def run() -> list[Draft]:
        await gate()
        started.set()
        return await step.run(copies, source)

    before = {d.id: _state(d) for d in live}
    task = asyncio.get_running_loop().create_task(run())
    return Ahead(step, frozenset(may_change), task, before, started=started)


__all__ = ["KEPT", "REDONE", "WASTED", "Ahead", "run_ahead"]
