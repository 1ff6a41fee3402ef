"""The run's controller: candidates stream through the stages, topped up until N goldens.

Every candidate runs its stages on its own as soon as it is activated (bounded only by the models'
concurrency limit), so the first goldens are finished while later contexts are still being scored.
Finished candidates are *committed* strictly in candidate order: their kept drafts are offered to
deduplication one by one, and the run ends when N have been kept. Because the order of offers never
depends on which request came back first, the same seed and inputs (and a warm cache) always give
the same goldens, however the requests interleave.

Topping up: the controller keeps enough candidates active that N goldens are expected to come out
at the run's own drop rates (:class:`~synth.run.yields.Yields`: a prior of 10% dropped at first,
then each stage's observed rate), so the first wave covers the usual drops; every drop (a context
the critic rejected, an input the filter refused, a duplicate, an easy golden past ``max_easy``)
lowers that expectation and so draws a new candidate at once. Once the candidates ahead of one hold
N live drafts, it does not start its later steps (from :data:`GATE_FROM` on) until a drop ahead of
it makes it needed: a spare costs its first steps only, unless it is needed.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from synth.contexts.feed import AUTH_FAILURE, Candidate, Feed, refused_key, seed_drop_stage
from synth.errors import AuthenticationError
from synth.generate.dedup import DUPLICATE, Deduplicator
from synth.generate.dedup import LABEL as DEDUP
from synth.generate.draft import Draft
from synth.run.difficulty import STAGE as DIFFICULTY
from synth.run.difficulty import TOO_EASY, is_easy
from synth.run.shortfall import NEAR_DUPLICATES, TOP_UP_LIMIT, explain_shortfall
from synth.run.stages import CandidateRunner
from synth.run.yields import COMMIT, Yields, contexts_for

#: drop reason of drafts left over once N goldens are kept
NOT_NEEDED = "not_needed"
#: the first step a candidate waits before while the ones ahead of it hold N live drafts
GATE_FROM = 2


@dataclass
class Target:
    """What the run aims for: ``num_goldens`` goldens, or else ``contexts`` contexts' worth."""

    per_context: int
    num_goldens: int | None = None
    contexts: int | None = None


@dataclass
class Slot:
    """An activated candidate while it runs: its expected yield and, when done, its drafts."""

    candidate: Candidate
    expected: int
    stages_done: list[str] = field(default_factory=list)
    drafts: list[Draft] | None = None
    vectors: list[list[float]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


@dataclass
class StreamResult:
    """What the controller delivered and what it went through to get there."""

    goldens: list[Draft]
    committed: list[Slot]  # candidates whose drafts were offered, in order
    dedup_dropped: int = 0
    not_needed: int = 0
    too_easy: int = 0
    shortfall: list[str] = field(default_factory=list)  # why fewer than asked, when so


class Stream:
    """Runs candidates from ``feed`` through ``runner`` until ``target`` is met (or cannot be).

    ``wakeup`` is the signal the loop waits on between rounds: the stream sets it when a candidate
    moves on, and whoever made the feed gave the feed a way to set it (its ``notify``).
    ``max_easy`` caps the goldens measured ``easy`` (None: no cap); the others are dropped.
    ``yields`` estimates what each candidate will give (default: the run's drop rates, learnt).
    """

    def __init__(
        self,
        feed: Feed,
        runner: CandidateRunner,
        target: Target,
        dedup: Deduplicator | None,
        *,
        on_change: Callable[[], None] = lambda: None,
        wakeup: asyncio.Event | None = None,
        max_easy: int | None = None,
        yields: Yields | None = None,
    ) -> None:
        self.feed = feed
        self.runner = runner
        self.target = target
        self.dedup = dedup
        self.on_change = on_change
        self.max_easy = max_easy
        self.too_easy = 0
        self.ready: list[Candidate] = []  # produced by the feed, not yet activated
        self.slots: list[Slot] = []  # activated, in candidate order
        self._by_seq: dict[int, Slot] = {}
        self.head = 0  # next slot to commit
        self.kept: list[Draft] = []  # without deduplication
        self.not_needed = 0
        self.dedup_dropped = 0
        self.done = False
        self.error: BaseException | None = None
        self._changed = wakeup if wakeup is not None else asyncio.Event()
        self.yields = yields or Yields(runner.stages, target.per_context)
        #: candidates (by seq) waiting at a step until they are needed
        self._waiting: dict[int, asyncio.Event] = {}
        self.held_back = 0  # times a candidate waited before a step
        runner.gate = self.gate  # the runner awaits it before each step after the first

    # ---- progress counters -----------------------------------------------------------------------
    @property
    def goldens_so_far(self) -> int:
        """Goldens kept so far (after deduplication, when on)."""
        return len(self.dedup.kept) if self.dedup is not None else len(self.kept)

    @property
    def goldens(self) -> list[Draft]:
        """The drafts kept so far, in order (after deduplication, when on)."""
        return self.dedup.kept if self.dedup is not None else self.kept

    @property
    def committed(self) -> list[Slot]:
        """The candidates whose drafts were offered so far, in order."""
        return self.slots[: self.head]

    def stage_counts(self) -> dict[str, tuple[int, int]]:
        """``stage -> (candidates done, candidates activated)``."""
        counts = {}
        for stage in self.runner.stages:
            done = sum(1 for s in self.slots if stage in s.stages_done)
            counts[stage] = (done, len(self.slots))
        return counts

    # ---- the loop --------------------------------------------------------------------------------
    def notify(self) -> None:
        """Wake the loop: something it waits on may have changed."""
        self._changed.set()

    async def run(self) -> StreamResult:
        """Stream until the target is met or nothing more can come; what was delivered."""
        try:
            while True:
                self.ready.extend(self.feed.advance())
                self._raise_errors()
                self._commit()
                self.on_change()
                if self.done:
                    break
                self._activate()
                self._request_more()
                self._release()
                if self._idle():
                    break
                await self._changed.wait()
                self._changed.clear()
        finally:
            await self._stop()
        return self._result()

    def _raise_errors(self) -> None:
        if self.feed.error is not None:
            raise self.feed.error
        if self.error is not None:
            raise self.error

    # ---- demand ----------------------------------------------------------------------------------
    def _expected_goldens(self) -> float:
        """Goldens kept so far plus those the running candidates are expected to give."""
        ahead = self.yields.ahead
        uncommitted = sum(s.expected * ahead(len(s.stages_done)) for s in self.slots[self.head :])
        return self.goldens_so_far + uncommitted

    def _deficit(self) -> int:
        """How many more contexts the run should activate now."""
        if self.target.num_goldens is not None:
            missing = self.target.num_goldens - self._expected_goldens()
            return contexts_for(missing, self.yields.per_new_context())
        assert self.target.contexts is not None
        return max(self.target.contexts - len(self.slots), 0)

    def _activate(self) -> None:
        while self.ready and self._deficit() > 0:
            candidate = self.ready.pop(0)
            slot = Slot(candidate, self.target.per_context)
            self.slots.append(slot)
            self._by_seq[candidate.seq] = slot
            slot.task = asyncio.get_running_loop().create_task(self._work(slot))

    def _request_more(self) -> None:
        deficit = self._deficit() - len(self.ready)
        if deficit > 0:
            self.feed.request(deficit)
            self.ready.extend(self.feed.advance())
            self._activate()

    def _idle(self) -> bool:
        """Nothing runs and nothing more can come: the run ends short of its target."""
        running = any(s.drafts is None for s in self.slots)
        if running or self.feed.pending > 0:
            return False
        if self.ready and self._deficit() > 0:
            return False
        if self.feed.exhausted or self.feed.budget_reached:
            return self.head >= len(self.slots)
        # the feed can still send seeds, but nothing asked it to: only when no deficit is left
        return self._deficit() == 0 and self.head >= len(self.slots)

    # ---- spares wait until they are needed ---------------------------------------------------------
    async def gate(self, candidate: Candidate, step: int) -> None:
        """Return once ``candidate`` may run step ``step``: at once for its first steps, else once
        the candidates ahead of it hold fewer than N live drafts."""
        slot = self._by_seq.get(candidate.seq)
        if step < GATE_FROM or slot is None or self._needed().get(candidate.seq, True):
            return
        self.held_back += 1
        event = self._waiting[candidate.seq] = asyncio.Event()
        self.notify()  # the loop decides when it is needed
        await event.wait()

    def _needed(self) -> dict[int, bool]:
        """Whether each uncommitted candidate is needed: the live drafts of those ahead of it,
        and the goldens kept, fall short of N (always, for a run for a number of contexts)."""
        if self.target.num_goldens is None:
            return {}
        needed, ahead = {}, self.goldens_so_far
        for slot in self.slots[self.head :]:
            needed[slot.candidate.seq] = ahead < self.target.num_goldens
            ahead += slot.expected
        return needed

    def _release(self) -> None:
        """Let the waiting candidates that are needed now go on."""
        if not self._waiting:
            return
        needed = self._needed()
        for seq in [seq for seq in self._waiting if needed.get(seq, True)]:
            self._waiting.pop(seq).set()

    # ---- one candidate ---------------------------------------------------------------------------
    def on_stage(self, candidate: Candidate, stage: str, drafts: list[Draft]) -> None:
        slot = self._by_seq.get(candidate.seq)
        if slot is None:
            return
        slot.stages_done.append(stage)
        alive = sum(1 for d in drafts if d.kept)
        self.yields.observe(stage, slot.expected, alive)
        slot.expected = alive
        if any(d.drop_reason == AUTH_FAILURE for d in drafts):
            self.error = AuthenticationError(refused_key(self.runner.settings.generator))
        self.notify()

    async def _work(self, slot: Slot) -> None:
        try:
            drafts, vectors = await self.runner.process(slot.candidate)
            slot.vectors = vectors
            slot.drafts = drafts
            slot.expected = sum(1 for d in drafts if d.kept)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # reported to the loop, which ends the run with it
            self.error = exc
        finally:
            self.notify()

    # ---- in-order commit -------------------------------------------------------------------------
    def _commit(self) -> None:
        while not self.done and self.head < len(self.slots):
            slot = self.slots[self.head]
            if slot.drafts is None:
                return
            kept = [d for d in slot.drafts if d.kept]
            before, offered = self.goldens_so_far, len(kept)
            vectors: Sequence[list[float] | None] = (
                slot.vectors if len(slot.vectors) == len(kept) else [None] * len(kept)
            )
            for i, (draft, vector) in enumerate(zip(kept, vectors, strict=True)):
                if self._enough():
                    for rest in kept[i:]:
                        rest.drop("top_up", NOT_NEEDED)
                        self.not_needed += 1
                    offered = i
                    break
                if self._past_easy_cap(draft):
                    detail = f"{self.max_easy} easy goldens were kept already (max_easy_share)"
                    draft.drop(DIFFICULTY, TOO_EASY, detail)
                    self.too_easy += 1
                    self.runner.record_rejects(slot.candidate, DIFFICULTY, [draft])
                elif self.dedup is None:
                    self.kept.append(draft)
                else:
                    decision = self.dedup.offer(draft, vector)
                    if decision.action != "kept":
                        self.dedup_dropped += 1
            self.yields.observe(COMMIT, offered, self.goldens_so_far - before)
            slot.expected = 0
            self.head += 1
            if self._enough():
                self.done = True

    def _past_easy_cap(self, draft: Draft) -> bool:
        if self.max_easy is None or not is_easy(draft):
            return False
        return sum(1 for d in self.goldens if is_easy(d)) >= self.max_easy

    def _enough(self) -> bool:
        return (
            self.target.num_goldens is not None and self.goldens_so_far >= self.target.num_goldens
        )

    # ---- the end ---------------------------------------------------------------------------------
    async def _stop(self) -> None:
        tasks = [s.task for s in self.slots if s.task is not None and not s.task.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        await self.feed.aclose()

    def _result(self) -> StreamResult:
        goldens = list(self.goldens)
        result = StreamResult(
            goldens=goldens,
            committed=self.committed,
            dedup_dropped=self.dedup_dropped,
            not_needed=self.not_needed,
            too_easy=self.too_easy,
        )
        if self.target.num_goldens is not None and len(goldens) < self.target.num_goldens:
            result.shortfall = self._shortfall()
        return result

    def _shortfall(self) -> list[str]:
        ending = None
        if self.feed.budget_reached:
            ending = TOP_UP_LIMIT
        elif self.feed.exhausted:
            ending = self.feed.exhausted_reason
        drops: Counter[str] = Counter()
        for reason, n in self.feed.seed_outcomes(None).items():  # seeds that made no context
            if reason != "ok":
                drops[f"{seed_drop_stage(reason)}: {reason}"] += n
        for slot in self.committed:
            for draft in slot.drafts or []:
                # near-duplicates are counted once, below (a loser may sit in an earlier slot)
                near_duplicate = draft.dropped_at == DEDUP and draft.drop_reason == DUPLICATE
                if not draft.kept and draft.drop_reason != NOT_NEEDED and not near_duplicate:
                    drops[f"{draft.dropped_at}: {draft.drop_reason}"] += 1
        if self.dedup_dropped:
            drops[NEAR_DUPLICATES] += self.dedup_dropped
        return explain_shortfall(ending, drops)


__all__ = [
    "NOT_NEEDED",
    "TOP_UP_LIMIT",
    "Slot",
    "Stream",
    "StreamResult",
    "Target",
    "explain_shortfall",
]
