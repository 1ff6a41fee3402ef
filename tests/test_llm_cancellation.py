"""Cancellation and loops: a limiter slot is never lost to a cancelled waiter, a request shared
through the response cache survives the cancellation of the task that sent it, and the sync API
works inside a running event loop (a notebook).

Every step is ordered by events and by the event loop's own scheduling, never by sleeping."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel

from synth import LLM, Completion, ConfigError, FunctionModel, RateLimiter
from synth.llm.base import run_sync
from synth.llm.cache import CacheModel


class Verdict(BaseModel):
    supported: bool


async def _until(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    """Yield to the loop until ``condition()`` holds (a bounded number of turns)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never happened: {what}")


async def _waiting_task(limiter: RateLimiter, entered: list[str]) -> asyncio.Task[None]:
    """A task queued for one of ``limiter``'s slots (all of them are held)."""

    async def wait_for_slot() -> None:
        async with limiter.slot():
            entered.append("in")

    task = asyncio.create_task(wait_for_slot())
    await _until(lambda: len(limiter._slots._waiters) == 1, "the task queued for a slot")
    return task


async def _slot_is_free(limiter: RateLimiter) -> None:
    assert limiter.in_flight == 0
    async with asyncio.timeout(5):  # a lost slot would make this wait forever
        async with limiter.slot():
            assert limiter.in_flight == 1
    assert limiter.in_flight == 0


# ---- the limiter ---------------------------------------------------------------------------------


def test_a_waiter_cancelled_after_it_was_granted_a_slot_hands_the_slot_back() -> None:
    """The holder's release hands its slot to the waiter; the waiter is cancelled before it
    resumes: the slot must come back, or the limiter runs one short from then on."""

    async def main() -> None:
        limiter = RateLimiter(1)
        entered: list[str] = []
        held = limiter.slot()
        await held.__aenter__()
        waiter = await _waiting_task(limiter, entered)
        _, granted = limiter._slots._waiters[0]
        await held.__aexit__(None, None, None)  # the slot goes to the waiter
        await _until(granted.done, "the slot was granted to the waiter")
        assert not waiter.done()  # granted, but it has not resumed yet
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert entered == []
        await _slot_is_free(limiter)

    asyncio.run(main())


def test_a_waiter_cancelled_between_hand_over_and_grant_passes_the_slot_on() -> None:
    """The release has picked the waiter, the grant is on its way, and the waiter is cancelled
    first: the grant finds it cancelled and passes the slot on (here, back to the pool)."""

    async def main() -> None:
        limiter = RateLimiter(1)
        entered: list[str] = []
        held = limiter.slot()
        await held.__aenter__()
        waiter = await _waiting_task(limiter, entered)
        _, granted = limiter._slots._waiters[0]
        await held.__aexit__(None, None, None)  # picks the waiter; the grant is scheduled
        assert not granted.done()
        waiter.cancel()  # before the grant runs
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert entered == [] and granted.cancelled()
        await _slot_is_free(limiter)

    asyncio.run(main())


def test_a_waiter_cancelled_in_the_queue_leaves_it_and_the_next_one_gets_the_slot() -> None:
    async def main() -> None:
        limiter = RateLimiter(1)
        first: list[str] = []
        second: list[str] = []
        held = limiter.slot()
        await held.__aenter__()
        cancelled = await _waiting_task(limiter, first)

        async def wait_for_slot() -> None:
            async with limiter.slot():
                second.append("in")

        patient = asyncio.create_task(wait_for_slot())
        await _until(lambda: len(limiter._slots._waiters) == 2, "two tasks queued")
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        assert len(limiter._slots._waiters) == 1  # it left the queue
        await held.__aexit__(None, None, None)
        async with asyncio.timeout(5):
            await patient
        assert first == [] and second == ["in"]
        await _slot_is_free(limiter)

    asyncio.run(main())


def test_a_freed_slot_skips_a_waiter_whose_loop_has_closed_and_goes_to_the_next() -> None:
    """A sync call's loop can close while its request still waits for a slot: the slot goes to
    the next waiter instead of being freed while someone still waits."""
    limiter = RateLimiter(1)
    gone = asyncio.new_event_loop()
    gone.close()

    async def main() -> None:
        entered: list[str] = []

        async def wait_for_slot() -> None:
            async with limiter.slot():
                entered.append("in")

        async with limiter.slot():
            limiter._slots._waiters.append((gone, gone.create_future()))  # queued, then closed
            task = asyncio.create_task(wait_for_slot())
            await _until(lambda: len(limiter._slots._waiters) == 2, "queued behind the closed one")
        async with asyncio.timeout(5):  # freed instead of handed on, it would wait forever
            await task
        assert entered == ["in"] and limiter.in_flight == 0 and not limiter._slots._waiters

    asyncio.run(main())


# ---- the response cache's shared in-flight request -------------------------------------------------


class _FirstCallHangs:
    """An async model function: the first call never answers (until cancelled), later ones do."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.started = asyncio.Event()

    async def __call__(self, prompt: str, system: str | None) -> str:
        self.calls.append(prompt)
        if len(self.calls) == 1:
            self.started.set()
            await asyncio.Event().wait()
        return f"reply to {prompt}"


def test_a_waiter_whose_shared_request_was_cancelled_makes_the_request_itself() -> None:
    """Two identical requests share one call; the task that made it is cancelled, not the other:
    the other sends the request itself instead of failing with the first task's cancellation."""

    async def main() -> None:
        fn = _FirstCallHangs()
        model = CacheModel(FunctionModel(fn), {})
        owner = asyncio.create_task(model.arequest("q"))
        await fn.started.wait()
        follower = asyncio.create_task(model.arequest("q"))
        await asyncio.sleep(0)  # the follower is now waiting on the owner's request
        assert fn.calls == ["q"]  # shared, not sent twice
        owner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await owner
        async with asyncio.timeout(5):
            completion = await follower
        assert completion.text == "reply to q" and not completion.cached
        assert fn.calls == ["q", "q"]
        again = await model.arequest("q")  # and its reply was stored
        assert again.cached and again.text == "reply to q" and fn.calls == ["q", "q"]

    asyncio.run(main())


def test_a_waiter_cancelled_itself_is_cancelled_and_the_shared_request_goes_on() -> None:
    async def main() -> None:
        release = asyncio.Event()
        calls: list[str] = []

        async def slow(prompt: str, system: str | None) -> str:
            calls.append(prompt)
            await release.wait()
            return "shared"

        model = CacheModel(FunctionModel(slow), {})
        owner = asyncio.create_task(model.arequest("q"))
        await _until(lambda: calls == ["q"], "the owner sent its request")
        follower = asyncio.create_task(model.arequest("q"))
        await asyncio.sleep(0)
        follower.cancel()
        with pytest.raises(asyncio.CancelledError):
            await follower
        release.set()
        async with asyncio.timeout(5):
            assert (await owner).text == "shared"
        assert calls == ["q"]

    asyncio.run(main())


def test_a_waiter_cancelled_just_after_its_shared_request_was_cancelled_stays_cancelled() -> None:
    """The shared request is cancelled, and then the waiter too, before it resumes: it was asked
    to stop, so it stops, instead of sending the request again."""

    async def main() -> None:
        fn = _FirstCallHangs()
        model = CacheModel(FunctionModel(fn), {})
        owner = asyncio.create_task(model.arequest("q"))
        await fn.started.wait()
        _, shared = model._pending[model.key("q")]
        follower = asyncio.create_task(model.arequest("q"))
        await asyncio.sleep(0)
        owner.cancel()
        await _until(shared.cancelled, "the owner cancelled the shared request")
        assert not follower.done()
        follower.cancel()
        for task in (owner, follower):
            with pytest.raises(asyncio.CancelledError):
                await task
        assert fn.calls == ["q"]

    asyncio.run(main())


def test_a_request_sent_again_by_a_waiter_is_the_whole_request() -> None:
    """The waiter that sends the request itself, after the shared one was cancelled, sends it
    with its system prompt, schema and label, and its reply is stored under the same key."""

    class Recording(LLM):
        provider, model = "scripted", "rec"

        def __init__(self) -> None:
            self.seen: list[tuple[str, str | None, object, str | None]] = []
            self.started = asyncio.Event()

        async def arequest(self, prompt, *, system=None, schema=None, label=None) -> Completion:
            self.seen.append((prompt, system, schema, label))
            if len(self.seen) == 1:
                self.started.set()
                await asyncio.Event().wait()
            return Completion(text='{"supported": true}', finish_reason="stop")

    async def main() -> None:
        inner = Recording()
        model = CacheModel(inner, {})
        ask = {"system": "s", "schema": Verdict, "label": "critic"}
        owner = asyncio.create_task(model.arequest("q", **ask))
        await inner.started.wait()
        follower = asyncio.create_task(model.arequest("q", **ask))
        await asyncio.sleep(0)
        owner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await owner
        async with asyncio.timeout(5):
            await follower
        assert inner.seen == [("q", "s", Verdict, "critic")] * 2
        assert (await model.arequest("q", **ask)).cached and len(inner.seen) == 2

    asyncio.run(main())


# ---- the sync API inside a running loop ------------------------------------------------------------


def test_the_sync_api_works_inside_a_running_event_loop() -> None:
    """A notebook cell runs inside an event loop: ``complete`` and ``run_sync`` still work there
    (on a loop of their own, in another thread), and an error reaches the caller as itself."""
    threads: list[int] = []

    async def answer() -> str:
        threads.append(threading.get_ident())
        return "answered"

    async def refuse() -> str:
        raise ConfigError("refused in the inner loop")

    async def cell() -> None:
        outer = threading.get_ident()
        assert run_sync(answer()) == "answered"
        assert threads and threads[0] != outer
        assert FunctionModel(lambda p, s: p.upper()).complete("hi") == "HI"
        with pytest.raises(ConfigError, match="refused in the inner loop"):
            run_sync(refuse())

    asyncio.run(cell())
    threads.clear()
    assert run_sync(answer()) == "answered"  # outside a loop: in this thread
    assert threads == [threading.get_ident()]


def test_a_request_cancelled_before_its_reply_is_counted_as_sent_and_as_cancelled() -> None:
    """The meter counts a request as it leaves; one the run abandons before its reply is also
    counted as cancelled (it may never have reached the provider), and a later one is not."""
    from synth.llm.spec import model_key
    from synth.llm.usage import MeterModel, Usage

    async def main() -> None:
        fn = _FirstCallHangs()
        usage = Usage()
        model = MeterModel(FunctionModel(fn), usage)
        task = asyncio.create_task(model.arequest("q", label="inputs"))
        await fn.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await model.arequest("r", label="inputs")
        counts = usage.by_label()["inputs"]
        assert (counts.requests, counts.cancelled) == (2, 1)
        # counted against the model that was asked, as its requests are
        assert [(m, c.cancelled) for m, c in usage.by_model().items()] == [(model_key(model), 1)]

    asyncio.run(main())
