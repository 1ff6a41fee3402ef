"""The run's controller: candidates stream through the stages, topped up until N goldens.

Every candidate runs its stages on its own as soon as it is activated (bounded only by the models'
concurrency limit), so the first goldens are finished while later contexts are still being scored.
Finished candidates are *committed* strictly in candidate order: their kept drafts are offered to
deduplication one by one, and the run ends when N have been kept. Because the order of offers never
depends on which request came back first, the same seed and inputs (and a warm cache) always give
the same goldens, however the requests interleave.

Topping up: the controller keeps enough candidates active that, if nothing else were dropped, N
goldens would come out; every drop (a context the critic rejected, an input the filter refused, a
duplicate, an easy golden past ``max_easy``) lowers that expectation and so draws a new candidate
at once.
"""

from __future__ import annotations

import asyncio
import math
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
from synth.run.stages import CandidateRunner

#: drop reason of drafts left over once N goldens are kept
NOT_NEEDED = "not_needed"


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
    def _expected_goldens(self) -> int:
        uncommitted = sum(s.expected for s in self.slots[self.head :])
        return self.goldens_so_far + uncommitted

    def _deficit(self) -> int:
        """How many more contexts the run should activate now."""
        if self.target.num_goldens is not None:
            missing = self.target.num_goldens - self._expected_goldens()
            return math.ceil(max(missing, 0) / self.target.per_context)
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

    # ---- one candidate ---------------------------------------------------------------------------
    def on_stage(self, candidate: Candidate, stage: str, drafts: list[Draft]) -> None:
        slot = self._by_seq.get(candidate.seq)
        if slot is None:
            return
        slot.stages_done.append(stage)
        slot.expected = sum(1 for d in drafts if d.kept)
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
            vectors: Sequence[list[float] | None] = (
                slot.vectors if len(slot.vectors) == len(kept) else [None] * len(kept)
            )
            for i, (draft, vector) in enumerate(zip(kept, vectors, strict=True)):
                if self._enough():
                    for rest in kept[i:]:
                        rest.drop("top_up", NOT_NEEDED)
                        self.not_needed += 1
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


#: why a run ended when each wanted context had been tried as often as allowed
TOP_UP_LIMIT = (
    "the top-up limit was reached: each wanted context may be tried 1 + max_retries times"
)
NEAR_DUPLICATES = "dedup: near-duplicate"
#: what a model failure kind means for the user, in the shortfall's first line
_MODEL_ERROR_HINTS = {
    "invalid_output": "the model's replies did not fit the requested format",
    "incomplete": "the model's replies were cut off or filtered",
    "rate_limit": "the server kept answering 429 after every retry",
    "server": "the server kept failing (5xx) after every retry",
    "timeout": "the model's requests kept timing out",
    "connection": "the server could not be reached",
    "bad_request": "the server refused the requests as invalid",
    "auth": "the server refused the API key",
}


def _is_model_error(reason: str) -> bool:
    return reason.split(": ")[-1].startswith("model_error")


def explain_shortfall(ending: str | None, drops: Counter[str]) -> list[str]:
    """Why fewer goldens than asked: the cause that stopped the run first, then what was dropped
    where (``drops``: ``"<stage>: <reason>" -> count``), most first.

    The top-up limit only ends a run because items kept being dropped, so when it ended the run
    the most frequent drop leads; model failures lead whenever they are at least half the drops
    (a model that fails is the thing to fix, whatever else happened); otherwise what ended the
    run (the corpus or the given contexts ran out) leads.
    """
    total = sum(drops.values())
    details = [
        f"{n} dropped as near-duplicates" if where == NEAR_DUPLICATES else f"{n} dropped at {where}"
        for where, n in drops.most_common()
    ]
    failures = Counter({w: n for w, n in drops.items() if _is_model_error(w)})
    lead: str | None = None
    if failures and 2 * sum(failures.values()) >= total:
        where, n = failures.most_common(1)[0]
        hint = _MODEL_ERROR_HINTS.get(where.rsplit("model_error:", 1)[-1])
        failed = sum(failures.values())
        every = "every item" if failed == total else f"{failed} of {total} dropped items"
        lead = (
            f"model errors: {every} failed, {n} at {where}"
            + (f" ({hint})" if hint else "")
            + "; see rejects.jsonl in the run directory"
        )
    elif drops and ending == TOP_UP_LIMIT:
        where, n = drops.most_common(1)[0]
        lead = f"{n} of {total} dropped items were dropped at {where}, and the top-up limit ended the run"
    reasons = [lead] if lead else []
    if ending is not None:
        reasons.append(ending)
    if not reasons:
        reasons.append("nothing more could be drawn")
    return reasons + details


__all__ = [
    "NOT_NEEDED",
    "TOP_UP_LIMIT",
    "Slot",
    "Stream",
    "StreamResult",
    "Target",
    "explain_shortfall",
]
