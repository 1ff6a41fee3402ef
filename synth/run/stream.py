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

Per-file quotas (:mod:`synth.run.quotas`): a candidate whose file has its quota when the commit
reaches it is held, so a drop is replaced from its own file; held drafts come last, in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from synth.contexts.feed import AUTH_FAILURE, Candidate, Feed, refused_key
from synth.errors import AuthenticationError
from synth.generate.dedup import Deduplicator
from synth.generate.draft import Draft
from synth.run.difficulty import STAGE as DIFFICULTY
from synth.run.difficulty import TOO_EASY, is_easy
from synth.run.quotas import HELD_DETAIL, FileQuotas, file_of, needed
from synth.run.shortfall import TOP_UP_LIMIT, explain_shortfall, shortfall_of
from synth.run.slots import NOT_NEEDED, Slot, StreamResult, Target
from synth.run.stages import CandidateRunner
from synth.run.yields import COMMIT, Yields, contexts_for

#: the first step a candidate waits before while the ones ahead of it hold N live drafts
GATE_FROM = 2


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
        quotas = target.quotas if target.num_goldens is not None else None
        self.quotas = FileQuotas(quotas) if quotas else None
        self.yields = yields or Yields(runner.stages, target.per_context)
        #: candidates (by seq) waiting at a step until they are needed
        self._waiting: dict[int, asyncio.Event] = {}
        self.held_back = 0  # times a candidate waited before a step
        runner.gate = self.gate  # the runner awaits it before each step after the first
        self._changed = wakeup if wakeup is not None else asyncio.Event()

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
        """The candidates whose drafts were offered (or held) so far, in order."""
        return [s for s in self.slots[: self.head] if s.drafts is not None]

    def stage_counts(self) -> dict[str, tuple[int, int]]:
        """``stage -> (candidates done, candidates activated)``."""
        counts = {}
        started = [s for s in self.slots if s.started]
        for stage in self.runner.stages:
            done = sum(1 for s in started if stage in s.stages_done)
            counts[stage] = (done, len(started))
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
        """Goldens kept so far plus those the running (and held) candidates are expected to give."""
        uncommitted = sum(self._expects(s) for s in self.slots[self.head :])
        held = self.quotas.held_expected() if self.quotas is not None else 0
        return self.goldens_so_far + uncommitted + held * self.yields.ahead(0)

    def _expects(self, slot: Slot) -> float:
        """What ``slot`` is expected to give, at the drop rates of the stages still ahead of it."""
        return slot.expected * self.yields.ahead(len(slot.stages_done))

    def _holding(self) -> FileQuotas | None:
        """The quotas, while they hold (not lifted)."""
        return self.quotas if self.quotas is not None and not self.quotas.lifted else None

    def _missing(self, quotas: FileQuotas) -> dict[str, float]:
        return quotas.missing(self.goldens, self.slots[self.head :])

    def _deficit(self) -> int:
        """How many more contexts the run should activate now."""
        if (quotas := self._holding()) is not None:
            # each file's drops replaced as they are seen: a first wave per file would cost a
            # spare context for every file
            return contexts_for(sum(self._missing(quotas).values()), self.target.per_context)
        if self.target.num_goldens is not None:
            missing = self.target.num_goldens - self._expected_goldens()
            return contexts_for(missing, self.yields.per_new_context())
        assert self.target.contexts is not None
        return max(self.target.contexts - len(self.slots), 0)

    def _activate(self) -> None:
        if self.quotas is not None and self.quotas.lifted:  # held slots first: they come earlier
            for slot, _ in self.quotas.held:
                if not slot.started and self._deficit() > 0:
                    self._start(slot)
        while self.ready and self._deficit() > 0:
            candidate = self.ready.pop(0)
            slot = Slot(candidate, 0)
            self.slots.append(slot)
            self._by_seq[candidate.seq] = slot
            quotas = self._holding()
            if quotas is None or quotas.wants(candidate, self._missing(quotas)):
                self._start(slot)
        if (quotas := self._holding()) is not None:  # a file fell short: start its parked slots
            missing = self._missing(quotas)
            for slot in self.slots[self.head :]:
                if not slot.started and quotas.wants(slot.candidate, missing):
                    self._start(slot)
                    missing[file_of(slot.candidate)] -= slot.expected

    def _start(self, slot: Slot) -> None:
        slot.expected = self.target.per_context
        slot.task = asyncio.get_running_loop().create_task(self._work(slot))

    def _request_more(self) -> None:
        deficit = self._deficit() - len(self.ready)
        if deficit > 0:
            self.feed.request(deficit)
            self.ready.extend(self.feed.advance())
            self._activate()

    def _idle(self) -> bool:
        """Nothing runs and nothing more can come: the run ends short of its target."""
        if self.head < len(self.slots) and not self.slots[self.head].started:
            self.notify()  # a parked slot the commit has reached: held or started next round
            return False
        running = any(s.started and s.drafts is None for s in self.slots)
        if running or self.feed.pending > 0:
            return False
        if self.ready and self._deficit() > 0:
            return False
        ended = self.head >= len(self.slots)
        if not (self.feed.exhausted or self.feed.budget_reached):
            # the feed can still send seeds, but nothing asked it to: only when no deficit is left
            ended = ended and self._deficit() == 0
        if ended and (quotas := self._holding()) is not None and quotas.held:
            quotas.lifted = True  # nothing else can come: the held drafts, in order
            self.notify()  # a next round at once, to start and offer them
            return False
        return ended

    # ---- spares wait until they are needed -------------------------------------------------------
    async def gate(self, candidate: Candidate, step: int) -> None:
        """Return once ``candidate`` may run step ``step``: at once for its first steps, else once
        the candidates ahead of it hold fewer than N live drafts (fewer than its file's quota)."""
        slot = self._by_seq.get(candidate.seq)
        if step < GATE_FROM or slot is None or self._needed().get(candidate.seq, True):
            return
        self.held_back += 1
        event = self._waiting[candidate.seq] = asyncio.Event()
        self.notify()  # the loop decides when it is needed
        await event.wait()

    def _needed(self) -> dict[int, bool]:
        """Whether each uncommitted candidate is needed (:func:`~synth.run.quotas.needed`)."""
        if self.target.num_goldens is None:
            return {}
        return needed(
            self.slots[self.head :], self.goldens, self.target.num_goldens, self._holding()
        )

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
            kept = [d for d in drafts if d.kept]
            paired: list[list[float] | None] = (
                list(vectors) if len(vectors) == len(kept) else [None] * len(kept)
            )
            slot.offers = list(zip(kept, paired, strict=True))
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
        if self.quotas is not None and self.quotas.lifted and not self._commit_held():
            return
        while not self.done and self.head < len(self.slots):
            slot = self.slots[self.head]
            quotas = self._holding()
            if quotas is not None and quotas.full(slot.candidate, self.goldens):
                quotas.hold(slot)  # its file has its quota: kept for when nothing else comes
                self.head += 1
                continue
            if slot.drafts is None:
                if not slot.started:
                    self._start(slot)
                return
            self._offer(slot)
            slot.expected = 0
            self.head += 1
            if self._enough():
                self.done = True

    def _commit_held(self) -> bool:
        """Offer the held slots in order (the quotas lifted); False while the first still runs."""
        assert self.quotas is not None
        held = self.quotas.held
        while held and not self.done:
            slot, first = held[0]
            if slot.drafts is None:
                if not slot.started:
                    self._start(slot)
                return False
            held.pop(0)
            self._offer(slot, first)
            slot.expected = 0
            if self._enough():
                self.done = True
        return True

    def _offer(self, slot: Slot, first: int = 0) -> None:
        """Offer ``slot``'s kept drafts from ``first`` on, in order, until N are kept (the rest
        are not needed) or, while the quotas hold, its file has its quota (the rest are held)."""
        offers, before, offered, held = slot.offers, self.goldens_so_far, 0, False
        for i in range(first, len(offers)):
            draft, vector = offers[i]
            if self._enough():
                for rest, _ in offers[i:]:
                    rest.drop("top_up", NOT_NEEDED)
                    self.not_needed += 1
                break
            quotas = self._holding()
            if quotas is not None and quotas.full(slot.candidate, self.goldens):
                quotas.hold(slot, i)
                held = True
                break
            offered += 1
            if self.quotas is not None:
                self.quotas.offered(draft, slot.candidate)
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
        if not held:  # the vectors were for deduplication: a list of floats each, 9 KB a golden
            slot.offers = []
        self.yields.observe(COMMIT, offered, self.goldens_so_far - before)

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
        if self.quotas is not None:  # held drafts the run ended without
            for draft in self.quotas.release():
                draft.drop("top_up", NOT_NEEDED, HELD_DETAIL)
                self.not_needed += 1
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
        asked = self.target.num_goldens
        # without a number asked, a run that delivers nothing still says why
        if (asked is not None and len(goldens) < asked) or (asked is None and not goldens):
            drafts = [d for slot in self.committed for d in slot.drafts or []]
            result.shortfall = shortfall_of(self.feed, drafts, self.dedup_dropped)
        return result


__all__ = [
    "NOT_NEEDED",
    "TOP_UP_LIMIT",
    "Slot",
    "Stream",
    "StreamResult",
    "Target",
    "explain_shortfall",
]
