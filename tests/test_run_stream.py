"""The run's controller (synth/run/stream.py) on its own: a scripted feed and a scripted runner,
no model and no run directory. How many candidates it asks for and when, the in-order commit
whatever order they finish in, the top-up after drops, deduplication, errors, and why a run ends
short (explain_shortfall's every branch, read back exactly)."""

from __future__ import annotations

import asyncio
from collections import Counter
from types import SimpleNamespace

import pytest

from synth.contexts.feed import AUTH_FAILURE, Candidate, ListFeed, refused_key
from synth.errors import AuthenticationError
from synth.generate.dedup import DUPLICATE, Deduplicator
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel
from synth.run.shortfall import shortfall_of
from synth.run.stream import (
    NOT_NEEDED,
    TOP_UP_LIMIT,
    Stream,
    StreamResult,
    Target,
    explain_shortfall,
)
from synth.run.yields import Yields
from synth.store import HashEmbedder

#: the bound on a run that must end (a failure bound, not a measure of speed)
PATIENCE = 60.0
CORPUS_DONE = "every seed chunk of the corpus was tried"


class Feed:
    """Hands out ``candidates`` as far as asked (``eager``: all at once, as a list of given
    contexts does); records every request."""

    def __init__(
        self,
        candidates: list[Candidate],
        *,
        budget: bool = False,
        outcomes: dict[str, int] | None = None,
        eager: bool = False,
    ) -> None:
        self.candidates = candidates
        self.budget = budget
        self.eager = eager
        self.outcomes = Counter(outcomes or {})
        self.requested: list[int] = []
        self.asked = 0
        self.handed = 0
        self.closed = False
        self.error: BaseException | None = None
        self.pending = 0
        self.exhausted_reason = CORPUS_DONE

    @property
    def exhausted(self) -> bool:
        return self.handed >= len(self.candidates)

    @property
    def budget_reached(self) -> bool:
        return self.budget and self.exhausted

    def request(self, contexts: int) -> None:
        self.requested.append(contexts)
        self.asked += contexts

    def advance(self) -> list[Candidate]:
        end = len(self.candidates) if self.eager else min(self.asked, len(self.candidates))
        new = self.candidates[self.handed : end]
        self.handed = max(self.handed, end)
        return new

    def seed_outcomes(self, up_to: int | None) -> Counter[str]:
        assert up_to is None
        return Counter(self.outcomes)

    def stage_stats(self, up_to: int | None) -> list:
        return []

    async def aclose(self) -> None:
        self.closed = True


class Runner:
    """Gives each candidate the drafts of its script: ``(input, None)`` kept, ``(input, reason)``
    dropped at filter, ``(input, reason, stage)`` dropped at that stage. ``wait_for[key]`` holds a
    candidate until another one has finished; ``hold[key]`` holds it after its stages, before it
    returns, until another one has started."""

    stages = ["inputs", "filter"]

    def __init__(
        self,
        script: dict[str, list[tuple]],
        *,
        vectors: dict[str, list[list[float]]] | None = None,
        wait_for: dict[str, str] | None = None,
        hold: dict[str, str] | None = None,
        errors: dict[str, BaseException] | None = None,
    ) -> None:
        self.script = script
        self.vectors = vectors or {}
        self.wait_for = wait_for or {}
        self.hold = hold or {}
        self.errors = errors or {}
        self.settings = SimpleNamespace(generator=FunctionModel(lambda p, s: "", name="gen"))
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cleaned: list[str] = []  # cancelled, and done unwinding
        self.stream: Stream | None = None
        self._done: dict[str, asyncio.Event] = {}
        self._started: dict[str, asyncio.Event] = {}

    def _event(self, key: str) -> asyncio.Event:
        return self._done.setdefault(key, asyncio.Event())

    def _start(self, key: str) -> asyncio.Event:
        return self._started.setdefault(key, asyncio.Event())

    async def process(self, candidate: Candidate) -> tuple[list[Draft], list[list[float]]]:
        assert self.stream is not None
        self.started.append(candidate.key)
        self._start(candidate.key).set()
        if candidate.key in self.wait_for:
            try:
                await self._event(self.wait_for[candidate.key]).wait()
            except asyncio.CancelledError:
                await asyncio.sleep(0)  # unwinding takes a turn of the loop
                self.cleaned.append(candidate.key)
                raise
        drafts = []
        for i, (text, reason, *stage) in enumerate(self.script[candidate.key]):
            draft = Draft(id=f"{candidate.key}-{i}", input=text)
            if reason is not None:
                draft.drop(stage[0] if stage else "filter", reason)
            drafts.append(draft)
        for stage_name in self.stages:
            self.stream.on_stage(candidate, stage_name, drafts)
        if candidate.key in self.hold:
            await self._start(self.hold[candidate.key]).wait()
        if candidate.key in self.errors:
            raise self.errors[candidate.key]
        self.finished.append(candidate.key)
        self._event(candidate.key).set()
        return drafts, self.vectors.get(candidate.key, [])


def candidates(n: int) -> list[Candidate]:
    return [Candidate(i, f"c{i}", None) for i in range(n)]


def kept(key: str, n: int = 2) -> dict[str, list[tuple]]:
    return {key: [(f"{key} question {i}", None) for i in range(n)]}


def stream_of(
    feed: Feed, runner: Runner, target: Target, dedup: Deduplicator | None = None, **kwargs
) -> Stream:
    """The stream, by default expecting no drop and learning no rate (``exact``): each drop is
    replaced once seen, so the counts below are the top-up's own; ``learnt=True``: the run's."""
    if not kwargs.pop("learnt", False):
        kwargs.setdefault("yields", exact(runner, target))
    stream = Stream(feed, runner, target, dedup, **kwargs)  # type: ignore[arg-type]
    runner.stream = stream
    return stream


def exact(runner: Runner, target: Target) -> Yields:
    return Yields(runner.stages, target.per_context, prior_keep=1.0, learn=False)


def run(stream: Stream) -> StreamResult:
    async def go() -> StreamResult:
        return await asyncio.wait_for(stream.run(), PATIENCE)

    return asyncio.run(go())


def ids(drafts: list[Draft]) -> list[str]:
    return [d.id for d in drafts]


def test_a_run_asks_for_what_n_goldens_need_and_leaves_the_rest_not_needed() -> None:
    feed = Feed(candidates(4))
    runner = Runner({**kept("c0"), **kept("c1"), **kept("c2"), **kept("c3")})
    snapshots: list[dict] = []
    stream = stream_of(
        feed, runner, Target(per_context=2, num_goldens=3), on_change=lambda: snapshots.append(0)
    )
    result = run(stream)
    assert ids(result.goldens) == ["c0-0", "c0-1", "c1-0"]
    assert feed.requested == [2]  # ceil(3 / 2) contexts, all at once
    assert runner.started == ["c0", "c1"]
    assert [s.candidate.key for s in result.committed] == ["c0", "c1"]
    [extra] = [d for d in result.committed[1].drafts or [] if not d.kept]
    assert (extra.id, extra.dropped_at, extra.drop_reason) == ("c1-1", "top_up", NOT_NEEDED)
    assert result.not_needed == 1 and stream.not_needed == 1
    assert result.dedup_dropped == 0 and result.shortfall == []
    assert stream.done and feed.closed and len(snapshots) >= 1
    assert stream.goldens_so_far == 3
    assert stream.stage_counts() == {"inputs": (2, 2), "filter": (2, 2)}
    assert all(s.expected == 0 for s in result.committed)


def test_a_feed_that_hands_out_everything_at_once_has_only_the_needed_ones_run() -> None:
    feed = ListFeed(candidates(5))
    runner = Runner({f"c{i}": [("q", None), ("r", None)] for i in range(5)})
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert runner.started == ["c0", "c1"]
    assert ids(result.goldens) == ["c0-0", "c0-1", "c1-0", "c1-1"]


def test_candidates_handed_out_unasked_are_kept_for_later_not_asked_for_again() -> None:
    feed = Feed(candidates(5), eager=True)
    runner = Runner({f"c{i}": [("q", None), ("r", None)] for i in range(5)})
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert runner.started == ["c0", "c1"] and feed.requested == []
    assert ids(result.goldens) == ["c0-0", "c0-1", "c1-0", "c1-1"]
    # a run for a number of contexts ends once they are done, with candidates left over
    feed = Feed(candidates(5), eager=True)
    runner = Runner({f"c{i}": [("q", None), ("r", None)] for i in range(5)})
    result = run(stream_of(feed, runner, Target(per_context=2, contexts=3)))
    assert runner.started == ["c0", "c1", "c2"] and len(result.goldens) == 6


def test_every_drop_draws_a_new_candidate_at_once() -> None:
    feed = Feed(candidates(5))
    script = {"c0": [("a", "vague"), ("b", "vague")], **kept("c1"), **kept("c2"), **kept("c3")}
    runner = Runner(script)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    # c0 gave nothing: one context more was asked for, then no more
    assert feed.requested == [2, 1]
    assert runner.started == ["c0", "c1", "c2"]
    assert ids(result.goldens) == ["c1-0", "c1-1", "c2-0", "c2-1"]
    assert [s.candidate.key for s in result.committed] == ["c0", "c1", "c2"]
    assert result.not_needed == 0 and result.shortfall == []


def test_drops_draw_a_replacement_while_their_candidate_still_runs() -> None:
    # c0 drops both at filter, then returns only once c2 has started: c2 must be drawn on the
    # strength of the drops alone, before c0 is done
    feed = Feed(candidates(3))
    script = {"c0": [("a", "vague"), ("b", "vague")], **kept("c1"), **kept("c2")}
    runner = Runner(script, hold={"c0": "c2"})
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert runner.started == ["c0", "c1", "c2"] and feed.requested == [2, 1]
    assert ids(result.goldens) == ["c1-0", "c1-1", "c2-0", "c2-1"]


def test_a_running_candidate_counts_for_what_it_has_kept_so_far() -> None:
    # c0 keeps 1 of 2 and holds until c2 has started: c2 is drawn for the one c0 lost
    feed = Feed(candidates(3))
    script = {"c0": [("a", None), ("b", "vague")], **kept("c1"), **kept("c2")}
    runner = Runner(script, hold={"c0": "c2"})
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert runner.started == ["c0", "c1", "c2"] and feed.requested == [2, 1]
    assert ids(result.goldens) == ["c0-0", "c1-0", "c1-1", "c2-0"]
    assert result.not_needed == 1


def test_every_draft_past_the_target_is_counted_not_needed() -> None:
    feed = Feed(candidates(2))
    runner = Runner(kept("c0", 4))
    result = run(stream_of(feed, runner, Target(per_context=4, num_goldens=1)))
    assert ids(result.goldens) == ["c0-0"] and result.not_needed == 3
    assert [d.drop_reason for d in result.committed[0].drafts or []] == [None] + [NOT_NEEDED] * 3


def test_one_drop_of_two_asks_for_one_context_more() -> None:
    feed = Feed(candidates(4))
    script = {"c0": [("a", None), ("b", "vague")], **kept("c1"), **kept("c2", 1)}
    runner = Runner(script)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert feed.requested == [2, 1]
    assert ids(result.goldens) == ["c0-0", "c1-0", "c1-1", "c2-0"]


def test_goldens_are_committed_in_candidate_order_whatever_finishes_first() -> None:
    feed = Feed(candidates(2))
    runner = Runner({**kept("c0"), **kept("c1")}, wait_for={"c0": "c1"})
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert runner.finished == ["c1", "c0"]
    assert ids(result.goldens) == ["c0-0", "c0-1", "c1-0", "c1-1"]
    # c0, still running when c1 was done, was still expected to give its 2: nothing more asked
    assert feed.requested == [2]


def test_a_later_candidate_done_first_waits_for_the_one_before_it() -> None:
    feed = Feed(candidates(3))
    runner = Runner({**kept("c0"), **kept("c1"), **kept("c2")}, wait_for={"c0": "c1"})
    # one golden expected of each: two candidates run at once
    result = run(stream_of(feed, runner, Target(per_context=1, num_goldens=2)))
    assert runner.finished == ["c1", "c0"]
    # c1 finished first, but c0 comes first and gives both: c1 is never committed
    assert ids(result.goldens) == ["c0-0", "c0-1"]
    assert [s.candidate.key for s in result.committed] == ["c0"]
    assert result.not_needed == 0


def test_kept_drafts_are_offered_to_deduplication_in_order_with_their_vectors() -> None:
    feed = Feed(candidates(3))
    runner = Runner(
        {**kept("c0"), **kept("c1"), **kept("c2")},
        vectors={
            "c0": [[1.0, 0.0], [0.0, 1.0]],
            "c1": [[1.0, 0.0], [0.0, 1.0]],  # both near-duplicates of c0's
            "c2": [[0.6, 0.8], [-1.0, 0.0]],
        },
    )
    dedup = Deduplicator(None, 0.9)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=4), dedup))
    assert ids(result.goldens) == ["c0-0", "c0-1", "c2-0", "c2-1"]
    assert result.dedup_dropped == 2 and result.shortfall == []
    assert feed.requested == [2, 1]
    # offered, the vectors are let go (a list of floats a golden, kept to the end of the run
    # before); the drafts stay, for the stage counts
    assert [s.offers for s in result.committed] == [[], [], []]
    assert [len(s.drafts or []) for s in result.committed] == [2, 2, 2]


def test_vectors_that_do_not_match_the_kept_drafts_are_embedded_again() -> None:
    feed = Feed(candidates(2))
    script = {"c0": [("How do inverters work?", None), ("Why is the sky blue?", None)]}
    runner = Runner(script, vectors={"c0": [[1.0, 0.0]]})
    dedup = Deduplicator(HashEmbedder(64), 0.9)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=2), dedup))
    assert ids(result.goldens) == ["c0-0", "c0-1"]
    assert dedup.stats.items_in == 2


def test_a_run_for_a_number_of_contexts_runs_exactly_those() -> None:
    feed = Feed(candidates(5))
    runner = Runner({f"c{i}": [("q", None), ("r", "vague")] for i in range(5)})
    result = run(stream_of(feed, runner, Target(per_context=2, contexts=3)))
    assert feed.requested == [3] and runner.started == ["c0", "c1", "c2"]
    assert ids(result.goldens) == ["c0-0", "c1-0", "c2-0"]
    assert result.shortfall == [] and result.not_needed == 0


def test_a_run_short_of_its_target_says_why_and_what_was_dropped_where() -> None:
    feed = Feed(candidates(2), outcomes={"ok": 2, "below_quality_threshold": 3, "too_few": 1})
    script = {
        "c0": [("a", None), ("b", "vague"), ("f", "model_error:server", "dedup")],
        "c1": [("c", "model_error:timeout"), ("d", None), ("e", "vague")],
    }
    result = run(stream_of(feed, Runner(script), Target(per_context=3, num_goldens=5)))
    assert ids(result.goldens) == ["c0-0", "c1-1"]
    # a draft dropped at dedup for another reason than a near-duplicate is counted with the rest
    assert result.shortfall == [
        CORPUS_DONE,
        "3 dropped at critic: below_quality_threshold",
        "2 dropped at filter: vague",
        "1 dropped at group: too_few",
        "1 dropped at dedup: model_error:server",
        "1 dropped at filter: model_error:timeout",
    ]


def test_near_duplicates_are_counted_once_and_drafts_not_needed_not_at_all() -> None:
    feed = Feed(candidates(2), budget=True)
    runner = Runner(
        {**kept("c0"), **kept("c1")},
        vectors={"c0": [[1.0, 0.0], [0.0, 1.0]], "c1": [[1.0, 0.0], [0.0, 1.0]]},
    )
    dedup = Deduplicator(None, 0.9)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=3), dedup))
    losers = [d for s in result.committed for d in s.drafts or [] if d.drop_reason == DUPLICATE]
    assert len(losers) == 2 and result.dedup_dropped == 2
    assert result.shortfall == [
        "2 of 2 dropped items were dropped at dedup: near-duplicate, and the top-up limit ended "
        "the run",
        TOP_UP_LIMIT,
        "2 dropped as near-duplicates",
    ]


def test_a_run_that_reached_its_target_has_no_shortfall_though_the_feed_ran_out() -> None:
    feed = Feed(candidates(1), budget=True)
    result = run(stream_of(feed, Runner(kept("c0")), Target(per_context=2, num_goldens=2)))
    assert ids(result.goldens) == ["c0-0", "c0-1"] and result.shortfall == []


class ClosingFeed(Feed):
    """A feed that notes, when it is closed, which cancelled candidates were done unwinding."""

    def __init__(self, candidates: list[Candidate], runner: Runner) -> None:
        super().__init__(candidates)
        self.runner = runner
        self.cleaned_at_close: list[str] | None = None

    async def aclose(self) -> None:
        self.cleaned_at_close = list(self.runner.cleaned)
        await super().aclose()


def test_an_error_in_the_feed_ends_the_run_and_stops_the_work_under_way() -> None:
    runner = Runner({**kept("c0"), **kept("c1")}, wait_for={"c0": "never"})
    feed = ClosingFeed(candidates(3), runner)

    async def go() -> None:
        stream = stream_of(feed, runner, Target(per_context=2, num_goldens=4))
        task = asyncio.ensure_future(stream.run())
        while "c1" not in runner.finished:
            await asyncio.sleep(0)
        feed.error = RuntimeError("the critic batch failed")
        stream.notify()
        with pytest.raises(RuntimeError, match="the critic batch failed"):
            await asyncio.wait_for(task, PATIENCE)
        # the candidate still waiting was cancelled, and the feed closed
        slot = stream.slots[0]
        assert slot.task is not None and slot.task.cancelled()
        assert feed.closed
        # the feed is closed only once the cancelled candidate is done unwinding
        assert feed.cleaned_at_close == ["c0"]

    asyncio.run(go())


def test_an_error_in_a_candidate_ends_the_run_with_it() -> None:
    feed = Feed(candidates(2))
    runner = Runner({**kept("c0"), **kept("c1")}, errors={"c1": ValueError("broken")})
    with pytest.raises(ValueError, match="broken"):
        run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert feed.closed


def test_a_refused_key_ends_the_run_with_the_servers_answer() -> None:
    feed = Feed(candidates(2))
    runner = Runner({"c0": [("", AUTH_FAILURE)], **kept("c1")})
    with pytest.raises(AuthenticationError) as caught:
        run(stream_of(feed, runner, Target(per_context=2, num_goldens=4)))
    assert str(caught.value) == refused_key(runner.settings.generator)


def test_the_counts_while_it_runs_follow_the_stages_done() -> None:
    feed = Feed(candidates(3))
    runner = Runner({**kept("c0"), **kept("c1"), **kept("c2")}, wait_for={"c1": "never"})
    seen: list[tuple] = []

    async def go() -> None:
        stream = stream_of(
            feed,
            runner,
            Target(per_context=2, num_goldens=4),
            on_change=lambda: seen.append((stream.goldens_so_far, stream.stage_counts())),
        )
        task = asyncio.ensure_future(stream.run())
        while len(seen) < 2:
            await asyncio.sleep(0)
        assert stream.slots[1].expected == 2  # not finished: still expected to give 2
        assert [s.candidate.key for s in stream.committed] == ["c0"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    assert seen[0] == (0, {"inputs": (0, 0), "filter": (0, 0)})
    # c0 done and committed, c1 activated but not through a stage yet
    assert seen[1] == (2, {"inputs": (1, 2), "filter": (1, 2)})


def test_a_feed_with_work_pending_is_waited_for_on_the_signal_it_was_given() -> None:
    feed = Feed(candidates(2))
    feed.pending = 1
    runner = Runner({**kept("c0"), **kept("c1")})

    async def go() -> StreamResult:
        wakeup = asyncio.Event()  # the feed's notify sets it, not the stream's
        stream = stream_of(feed, runner, Target(per_context=2, num_goldens=4), wakeup=wakeup)
        feed.candidates = []  # nothing ready yet: the feed is still working on them
        task = asyncio.ensure_future(stream.run())
        for _ in range(20):
            await asyncio.sleep(0)
        assert not task.done()
        feed.candidates = candidates(2)
        feed.pending = 0
        wakeup.set()
        return await asyncio.wait_for(task, PATIENCE)

    result = asyncio.run(go())
    assert ids(result.goldens) == ["c0-0", "c0-1", "c1-0", "c1-1"]


# ---- why a run ends short -----------------------------------------------------------------------
HINTS = {
    "invalid_output": "the model's replies did not fit the requested format",
    "incomplete": "the model's replies were cut off or filtered",
    "rate_limit": "the server kept answering 429 after every retry",
    "server": "the server kept failing (5xx) after every retry",
    "timeout": "the model's requests kept timing out",
    "connection": "the server could not be reached",
    "bad_request": "the server refused the requests as invalid",
    "auth": "the server refused the API key",
}


@pytest.mark.parametrize("kind", sorted(HINTS))
def test_model_failures_lead_with_what_they_mean(kind: str) -> None:
    drops = Counter({f"filter: model_error:{kind}": 2})
    assert explain_shortfall(None, drops) == [
        f"model errors: every item failed, 2 at filter: model_error:{kind} ({HINTS[kind]}); "
        "see rejects.jsonl in the run directory",
        f"2 dropped at filter: model_error:{kind}",
    ]


def test_model_failures_of_half_the_drops_lead_before_the_ending() -> None:
    drops = Counter(
        {
            "critic: below_quality_threshold": 3,
            "inputs: model_error:odd": 1,
            "filter: model_error:timeout": 2,
        }
    )
    assert explain_shortfall(TOP_UP_LIMIT, drops) == [
        "model errors: 3 of 6 dropped items failed, 2 at filter: model_error:timeout "
        f"({HINTS['timeout']}); see rejects.jsonl in the run directory",
        TOP_UP_LIMIT,
        "3 dropped at critic: below_quality_threshold",
        "2 dropped at filter: model_error:timeout",
        "1 dropped at inputs: model_error:odd",
    ]
    # a kind without a hint is named alone
    assert explain_shortfall(None, Counter({"inputs: model_error:odd": 1}))[0] == (
        "model errors: every item failed, 1 at inputs: model_error:odd; "
        "see rejects.jsonl in the run directory"
    )


def test_model_failures_under_half_the_drops_do_not_lead() -> None:
    drops = Counter({"filter: vague": 3, "filter: model_error:timeout": 2})
    assert explain_shortfall(CORPUS_DONE, drops) == [
        CORPUS_DONE,
        "3 dropped at filter: vague",
        "2 dropped at filter: model_error:timeout",
    ]
    assert explain_shortfall(TOP_UP_LIMIT, drops)[:2] == [
        "3 of 5 dropped items were dropped at filter: vague, and the top-up limit ended the run",
        TOP_UP_LIMIT,
    ]


def test_a_shortfall_with_nothing_to_say_says_so() -> None:
    assert explain_shortfall(None, Counter()) == ["nothing more could be drawn"]
    assert explain_shortfall(TOP_UP_LIMIT, Counter()) == [TOP_UP_LIMIT]
    assert explain_shortfall(CORPUS_DONE, Counter()) == [CORPUS_DONE]
    # a drop whose reason only mentions a model error is not one
    assert explain_shortfall(None, Counter({"filter: not model_error": 1})) == [
        "nothing more could be drawn",
        "1 dropped at filter: not model_error",
    ]
    assert TOP_UP_LIMIT == (
        "the top-up limit was reached: each wanted context may be tried 1 + max_retries times"
    )


# ---- the first wave covers the usual drops (issue 22) -----------------------------------------


class StepRunner(Runner):
    """Walks ``stages`` for real: each draft's drop shows at its own stage, and every stage after
    the first waits at the stream's gate first (as CandidateRunner does). ``ran`` records
    ``(candidate, stage)`` in the order they ran."""

    stages = ["inputs", "filter", "evolve"]

    def __init__(self, script: dict[str, list[tuple]]) -> None:
        super().__init__(script)
        self.ran: list[tuple[str, str]] = []
        self.gate = None

    async def process(self, candidate: Candidate) -> tuple[list[Draft], list[list[float]]]:
        assert self.stream is not None and self.gate is not None
        self.started.append(candidate.key)
        drafts = [
            Draft(id=f"{candidate.key}-{i}", input=t[0])
            for i, t in enumerate(self.script[candidate.key])
        ]
        for index, stage in enumerate(self.stages):
            if index > 0:
                await self.gate(candidate, index)
            self.ran.append((candidate.key, stage))
            for draft, (_, reason, *at) in zip(drafts, self.script[candidate.key], strict=True):
                if reason is not None and (at[0] if at else "filter") == stage:
                    draft.drop(stage, reason)
            self.stream.on_stage(candidate, stage, drafts)
        self.finished.append(candidate.key)
        return drafts, []


def test_the_first_wave_starts_enough_contexts_for_a_tenth_dropped() -> None:
    # 20 goldens at 2 a context, expecting 10% dropped: ceil(20 / 1.8) = 12 contexts at once
    feed = Feed(candidates(14))
    script = {f"c{i}": [("q", None), ("r", None)] for i in range(14)}
    script["c0"] = [("q", None), ("r", "vague")]
    script["c3"] = [("q", "vague"), ("r", None)]
    runner = StepRunner(script)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=20), learnt=True))
    assert feed.requested == [12]  # the two drops were covered: no second request
    assert len(result.goldens) == 20
    assert ids(result.goldens)[:3] == ["c0-0", "c1-0", "c1-1"]
    # the same script replacing each drop once seen asks twice
    feed = Feed(candidates(14))
    runner = StepRunner(script)
    run(stream_of(feed, runner, Target(per_context=2, num_goldens=20)))
    assert feed.requested[0] == 10 and len(feed.requested) > 1


def test_spares_stop_before_their_later_steps_once_n_live_drafts_are_ahead() -> None:
    feed = Feed(candidates(12))
    runner = StepRunner({f"c{i}": [("q", None), ("r", None)] for i in range(12)})
    stream = stream_of(feed, runner, Target(per_context=2, num_goldens=20), learnt=True)
    result = run(stream)
    assert runner.started == [f"c{i}" for i in range(12)]
    # c10 and c11 ran their inputs and filter, then waited: the ten before them held 20 drafts
    assert [s for k, s in runner.ran if k in ("c10", "c11")] == ["inputs", "filter"] * 2
    assert ("c9", "evolve") in runner.ran and stream.held_back == 2
    assert ids(result.goldens) == [f"c{i}-{j}" for i in range(10) for j in range(2)]


def test_a_drop_ahead_of_a_spare_lets_it_go_on() -> None:
    feed = Feed(candidates(12))
    script = {f"c{i}": [("q", None), ("r", None)] for i in range(12)}
    script["c0"] = [("q", "vague"), ("r", "vague")]
    runner = StepRunner(script)
    result = run(stream_of(feed, runner, Target(per_context=2, num_goldens=20), learnt=True))
    # c0 lost both: c10 is needed and finishes, c11 is not and stops before its evolution
    assert ("c10", "evolve") in runner.ran and ("c11", "evolve") not in runner.ran
    assert feed.requested == [12]
    assert ids(result.goldens) == [f"c{i}-{j}" for i in range(1, 11) for j in range(2)]


def test_observed_drops_raise_what_the_run_asks_for_at_once() -> None:
    # every context loses half its drafts at the filter: the run learns it and asks for more
    # contexts per request than replacing each drop once seen does
    def script(n: int) -> dict[str, list[tuple]]:
        return {f"c{i}": [("q", None), ("r", "vague")] for i in range(n)}

    learnt, exact_feed = Feed(candidates(40)), Feed(candidates(40))
    result = run(stream_of(learnt, StepRunner(script(40)), Target(2, 10), learnt=True))
    run(stream_of(exact_feed, StepRunner(script(40)), Target(2, 10)))
    assert len(result.goldens) == 10
    assert len(learnt.requested) < len(exact_feed.requested)


def test_yields_start_at_the_prior_and_follow_what_the_stages_kept() -> None:
    yields = Yields(["inputs", "filter"], per_context=2)
    assert yields.per_new_context() == pytest.approx(1.8)
    assert yields.ahead(2) == pytest.approx(0.9 ** (1 / 3))  # the commit alone is ahead
    yields.observe("filter", 100, 50)
    assert yields.rate("filter") == pytest.approx((50 + 4 * 0.9 ** (1 / 3)) / 104)
    assert yields.per_new_context() < 1.0
    fixed = Yields(["inputs"], per_context=2, prior_keep=1.0, learn=False)
    fixed.observe("inputs", 10, 0)
    assert fixed.per_new_context() == 2.0


def test_a_shortfall_from_a_feed_that_neither_ran_out_nor_hit_its_budget_gives_no_empty_ending() -> (
    None
):
    # a feed still open (the run was stopped): no ending line, only the drops and the fallback
    feed = SimpleNamespace(
        budget_reached=False,
        exhausted=False,
        exhausted_reason="never read",
        seed_outcomes=lambda up_to: Counter({"ok": 3, "below_quality_threshold": 2}),
    )
    dropped = Draft(id="d0", input="q")
    dropped.drop("filter", "vague")
    assert shortfall_of(feed, [dropped], near_duplicates=0) == [
        "nothing more could be drawn",
        "2 dropped at critic: below_quality_threshold",
        "1 dropped at filter: vague",
    ]
