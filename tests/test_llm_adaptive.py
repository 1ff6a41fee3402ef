"""Adaptive concurrency: the limiter finds how many requests to keep in flight (synth.llm._aimd).

The arithmetic is checked as pure functions; the behaviour against the fake server through the
real openai SDK, by counts only (the server's log of outcomes and its peak in flight, the level
the limiter reached), never by a clock: bench/adaptive.py measures the times.
"""

from __future__ import annotations

import asyncio
import heapq
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from synth.errors import ConfigError
from synth.llm._aimd import (
    BASELINE_REPLIES,
    GROWTH,
    QUICK_SLACK,
    RATE_WAIT,
    SLOW_IN_A_ROW,
    START,
    ConcurrencyControl,
)
from synth.llm.factory import make_llm
from synth.llm.limiter import RateLimiter, _Slots


# ---- the arithmetic ------------------------------------------------------------------------------
def test_slow_start_quadruples_the_level_each_round_trip_up_to_the_ceiling() -> None:
    control = ConcurrencyControl(ceiling=40)
    assert control.level == START == 8 and GROWTH == 3
    for _ in range(8):  # one round trip at level 8
        control.on_reply("critic", 0.5)
    assert control.level == 32
    for _ in range(100):
        control.on_reply("critic", 0.5)
    assert control.level == control.peak == 40  # never past the ceiling


def test_the_level_grows_only_while_every_slot_is_taken() -> None:
    control = ConcurrencyControl(ceiling=256)
    for _ in range(30):
        control.on_reply("critic", 0.5, full=False)  # a quiet phase: fewer requests than slots
    assert control.level == START
    control.on_reply("critic", 0.5)
    assert control.level == START + GROWTH


def test_the_start_is_never_above_the_ceiling() -> None:
    assert ConcurrencyControl(ceiling=3).level == 3
    assert ConcurrencyControl(ceiling=100, start=2).level == 2


def test_a_429_cuts_the_level_once_per_round_trip() -> None:
    control = ConcurrencyControl(ceiling=256, start=32)
    sent_in = control.epoch
    assert control.on_congestion("rate_limit", sent_in) == 16
    # the other requests sent before the cut say the same thing: no second cut
    for _ in range(10):
        assert control.on_congestion("rate_limit", sent_in) == 16
    assert control.on_congestion("timeout", control.epoch) == 8  # sent after the cut
    assert control.report()["cuts"] == 2
    assert control.report()["signals"] == {"rate_limit": 11, "timeout": 1}


def test_after_a_cut_the_level_grows_back_by_one_per_reply_then_one_per_round_trip() -> None:
    control = ConcurrencyControl(ceiling=256, start=20)
    control.on_congestion("rate_limit", control.epoch, wait=RATE_WAIT)  # a window's 429
    assert control.level == 10
    for expected in range(11, 19):  # fast recovery: one per reply, up to 90% of the 20 cut from
        control.on_reply(None, 0.5)
        assert control.level == expected
    for _ in range(17):  # then one per round trip: 18 replies at 18
        control.on_reply(None, 0.5)
    assert control.level == 18
    control.on_reply(None, 0.5)
    assert control.level == 19
    for _ in range(18):  # the next round trip is 19 replies long, counted from the growth
        control.on_reply(None, 0.5)
    assert control.level == 19
    control.on_reply(None, 0.5)
    assert control.level == 20


def test_a_second_cut_recovers_toward_the_level_it_cut_from() -> None:
    control = ConcurrencyControl(ceiling=256, start=40)
    control.on_congestion("rate_limit", control.epoch, wait=5.0)  # 40 -> 20, back up to 36
    for _ in range(6):
        control.on_reply(None, 0.5)
    assert control.level == 26
    control.on_congestion("rate_limit", control.epoch, wait=5.0)  # 26 -> 13, back up to 23 only
    for _ in range(10):
        control.on_reply(None, 0.5)
    assert control.level == 23
    for _ in range(23):  # then one round trip of 23 replies
        control.on_reply(None, 0.5)
    assert control.level == 24


def test_after_a_cut_by_a_429_that_says_not_to_wait_the_level_grows_by_one_per_round_trip() -> None:
    control = ConcurrencyControl(ceiling=256, start=20)
    control.on_congestion("rate_limit", control.epoch, wait=0.01)  # a count in flight's 429
    assert control.level == 10
    for _ in range(9):  # not yet a round trip at level 10 (replies before the cut do not count)
        control.on_reply(None, 0.5)
    assert control.level == 10
    control.on_reply(None, 0.5)  # the tenth reply: a round trip
    assert control.level == 11


def test_the_report_says_where_the_level_started_is_and_peaked() -> None:
    control = ConcurrencyControl(ceiling=256, start=4)
    for _ in range(4):
        control.on_reply("critic", 0.5)
    control.on_congestion("timeout", control.epoch)
    assert control.report() == {
        "start": 4,
        "level": 8,  # 16 after a round trip of slow start, halved
        "peak_level": 16,
        "cuts": 1,
        "signals": {"timeout": 1},
    }
    assert ConcurrencyControl(ceiling=1).report()["start"] == 1  # the ceiling bounds the start


def test_the_level_never_drops_below_one() -> None:
    control = ConcurrencyControl(ceiling=4, start=1)
    assert control.on_congestion("rate_limit", control.epoch) == 1


def test_a_rising_latency_holds_the_level() -> None:
    control = ConcurrencyControl(ceiling=256)
    for _ in range(BASELINE_REPLIES):
        control.on_reply("inputs", 0.5)
    level = control.level
    for _ in range(50):  # the server queues: every reply takes four times as long
        control.on_reply("inputs", 2.0)
    assert control.level <= level + 3  # a few replies before the average says so, then held
    held = control.level
    for _ in range(50):
        control.on_reply("inputs", 2.0)
    assert control.level == held and not control.slow_start


def test_the_baseline_is_the_mean_of_a_labels_first_replies() -> None:
    control = ConcurrencyControl(ceiling=256)
    half = BASELINE_REPLIES // 2
    for seconds in [0.1] * half + [1.0] * half:  # a mean of 0.55: 1.1 s is the slack
        control.on_reply("critic", seconds)
    level = control.level
    for _ in range(20):  # 1.0 s is under the slack: flat, the level keeps growing
        control.on_reply("critic", 1.0)
    # but not quick (over QUICK_SLACK times the baseline): by one a reply, not by GROWTH
    assert control.level == level + 20 and control.slow_start


def test_slow_start_grows_by_growth_only_while_replies_are_as_quick_as_the_first() -> None:
    control = ConcurrencyControl(ceiling=256)
    for _ in range(BASELINE_REPLIES):
        control.on_reply("critic", 0.5)
    level = control.level
    control.on_reply("critic", 0.5 * QUICK_SLACK)  # just quick enough
    assert control.level == level + GROWTH
    control.on_reply("critic", 0.5 * QUICK_SLACK + 0.01)  # a first sign of queueing
    assert control.level == level + GROWTH + 1 and control.slow_start


def test_slow_start_ends_after_slow_replies_in_a_row_before_the_average_rises() -> None:
    control = ConcurrencyControl(ceiling=256)
    for _ in range(BASELINE_REPLIES):
        control.on_reply("critic", 0.5)
    # exactly the slack (2 x 0.5 s) is not slow
    for _ in range(SLOW_IN_A_ROW + 1):
        control.on_reply("critic", 1.0)
    assert control.slow_start
    # slow replies (over 1.0 s) broken by a quick one do not end it; the average stays flat,
    # under the slack, all along
    for seconds in [1.01] * (SLOW_IN_A_ROW - 1) + [0.5] + [1.01] * (SLOW_IN_A_ROW - 1):
        control.on_reply("critic", seconds)
    assert control.slow_start
    control.on_reply("critic", 1.01)  # the third slow reply in a row
    assert not control.slow_start


def test_latency_is_compared_per_label() -> None:
    """A slower stage is not a slower server: each label has its own baseline."""
    control = ConcurrencyControl(ceiling=256)
    for _ in range(BASELINE_REPLIES):
        control.on_reply("critic", 0.2)
    before = control.level
    for _ in range(20):
        control.on_reply("evolve", 2.0)  # ten times the critic's, but its own usual time
    assert control.level == before + 20 * GROWTH


# ---- the slots -----------------------------------------------------------------------------------
async def _turns() -> None:
    """Let the loop run what was handed to it (a slot is granted by a callback, then awaited)."""
    for _ in range(5):
        await asyncio.sleep(0)


def test_shrunk_slots_are_taken_back_as_requests_end() -> None:
    async def main() -> None:
        slots = _Slots(4)
        for _ in range(4):
            await slots.acquire()
        waiter = asyncio.ensure_future(slots.acquire())
        await asyncio.sleep(0)
        slots.resize(2)
        slots.release()
        slots.release()  # 2 held, size 2: none for the waiter yet
        await _turns()
        assert not waiter.done() and slots.in_use == 2
        slots.release()
        await _turns()
        assert waiter.done() and slots.in_use == 2

    asyncio.run(main())


def test_grown_slots_wake_waiters_at_once() -> None:
    async def main() -> None:
        slots = _Slots(1)
        await slots.acquire()
        waiters = [asyncio.ensure_future(slots.acquire()) for _ in range(3)]
        await asyncio.sleep(0)
        slots.resize(3)
        await _turns()
        assert [w.done() for w in waiters] == [True, True, False]
        assert slots.in_use == 3 and slots.in_use_peak == 3

    asyncio.run(main())


def test_a_fixed_limiter_reports_its_level_and_an_adaptive_one_its_path() -> None:
    fixed = RateLimiter(12).concurrency()
    assert fixed == {
        "adaptive": False,
        "max_concurrent": 12,
        "level": 12,
        "peak_in_flight": 0,
        "paced_by_provider": False,
        "holds": 0,
    }
    adaptive = RateLimiter(64, adaptive=True).concurrency()
    assert adaptive["adaptive"] is True and adaptive["level"] == adaptive["start"] == START
    assert adaptive["cuts"] == 0 and adaptive["signals"] == {}
    with pytest.raises(ConfigError):
        RateLimiter(8, adaptive=True, start=0)


def _queue(control: ConcurrencyControl, workers: int, service: float, requests: int) -> None:
    """A server of ``workers`` that queues the rest (first come, first served), on a simulated
    clock: the client keeps ``control.level`` requests out while any are left to send."""
    free = [0.0] * workers  # when each worker is next free
    out: list[tuple[float, float]] = []  # (reply time, send time), a heap
    now, left = 0.0, requests
    while left or out:
        while left and len(out) < control.level:
            start = max(now, heapq.heappop(free))
            heapq.heappush(free, start + service)
            heapq.heappush(out, (start + service, now))
            left -= 1
        now, sent = heapq.heappop(out)
        control.on_reply("critic", now - sent, full=bool(left) or len(out) + 1 >= control.level)


def test_a_queue_ends_slow_start_by_latency_alone() -> None:
    """Four workers, 0.05 s each, 300 requests: no 429 ever comes, the rising latency alone stops
    the level far below the ceiling (30 here; 159 when the latency is not looked at)."""
    control = ConcurrencyControl(ceiling=256)
    _queue(control, workers=4, service=0.05, requests=300)
    assert not control.slow_start and control.epoch == 0
    assert control.peak <= 64, control.report()


def test_an_open_server_lets_slow_start_reach_the_ceiling() -> None:
    control = ConcurrencyControl(ceiling=256)
    _queue(control, workers=256, service=0.05, requests=600)
    assert control.peak == 256 and control.slow_start


# ---- against the fake server ---------------------------------------------------------------------
def _run(server: FakeOpenAI, limiter: RateLimiter, requests: int) -> None:
    llm = make_llm("openai:m", base_url=server.url, limiter=limiter, max_retries=10)
    with llm:

        async def main() -> None:
            await asyncio.gather(*[llm.acomplete(f"question {i}") for i in range(requests)])

        asyncio.run(main())


def test_a_reply_grows_the_level_when_a_request_waited_during_its_round_trip() -> None:
    """Replies that come in a burst free their slots before the next wave is asked: each still
    counts as the level holding requests back when a request had to wait while it was out."""

    async def main(start: int, requests: int) -> int:
        # every reply as quick as the first: the growth asserted is the slow start's, whatever
        # the machine's load does to the round trips
        limiter = RateLimiter(256, adaptive=True, start=start, clock=lambda: 0.0)
        release = asyncio.Event()
        started: list[int] = []

        async def request(i: int) -> None:
            async with limiter.slot("critic"):
                started.append(i)
                await release.wait()

        tasks = [asyncio.ensure_future(request(i)) for i in range(requests)]
        await _turns()
        assert len(started) == min(start, requests)
        release.set()
        await asyncio.gather(*tasks)
        return limiter.level

    # level 2, a third request waiting: the first reply finds both slots taken, the second
    # its own only, yet the third waited while it was out: both grow the level (slow start)
    assert asyncio.run(main(2, 3)) == 2 + 2 * GROWTH
    # at least half the level in use, nobody waiting (a run's first wave at RUN_START): the
    # level was put to the test, and the next wave finds room
    assert asyncio.run(main(64, 40)) > 64
    # less than half in use and nobody waiting: the level never held requests back
    assert asyncio.run(main(8, 3)) == 8


def test_without_a_limit_the_level_rises_past_32() -> None:
    with FakeOpenAI(latency=0.2) as server:
        limiter = RateLimiter(128, adaptive=True)
        _run(server, limiter, 300)
        report = limiter.concurrency()
        assert report["peak_level"] > 32 and report["cuts"] == 0
        assert server.peak_in_flight > 32
        assert server.outcomes() == {"ok": 300}


def test_a_concurrency_limit_is_found_and_few_requests_are_refused() -> None:
    """A server that refuses more than 8 requests at once: after the first 100 requests, at most
    5% are refused, and the level stays near 8."""
    with FakeOpenAI(latency=0.05, max_in_flight=8, retry_after=0.01) as server:
        limiter = RateLimiter(64, adaptive=True)
        _run(server, limiter, 400)
        outcomes = [entry.outcome for entry in server.requests]
        later = outcomes[100:]
        refused = later.count("concurrency_limit")
        assert refused / len(later) <= 0.05, (refused, len(later))
        assert outcomes.count("ok") == 400
        report = limiter.concurrency()
        assert report["cuts"] >= 1 and report["signals"]["rate_limit"] >= 1
        # the level ends wherever its probe above the limit was when the last reply came: one
        # or two above 8 (two on a loaded machine, where replies come back in bursts)
        assert report["level"] <= 10


def test_a_pinned_limiter_keeps_its_level_whatever_the_server_says() -> None:
    with FakeOpenAI(latency=0.02, max_in_flight=4, retry_after=0.01) as server:
        limiter = RateLimiter(6)
        _run(server, limiter, 60)
        assert limiter.concurrency()["level"] == 6
        assert server.outcomes()["ok"] == 60 and server.outcomes()["concurrency_limit"] >= 1


def test_a_server_that_queues_is_not_flooded() -> None:
    """Four workers, the rest queued, through the real SDK: the level stops short of the ceiling.
    How far short depends on the client's own load (its measure of the first replies, which a
    busy machine stretches: 47 to 109 seen here beside busy loops, 230 once in CI): the level
    itself is checked against a simulated queue (test_a_queue_ends_slow_start_by_latency_alone).
    At 0.1 s a request the client's own delays weigh half what they did at 0.05 s (where a fresh
    CI machine once reached the ceiling, 256, with the SDK's threads started as they are needed)."""
    with FakeOpenAI(latency=0.1, workers=4) as server:
        limiter = RateLimiter(256, adaptive=True)
        _run(server, limiter, 300)
        report = limiter.concurrency()
        assert report["peak_level"] < 256 and not report["cuts"]
        assert server.outcomes() == {"ok": 300}


# ---- a run's limiter -----------------------------------------------------------------------------
def test_a_run_without_max_concurrent_finds_its_level_and_a_number_pins_it() -> None:
    from synth.run.models import ADAPTIVE_CEILING, RUN_START, make_limiter

    found = make_limiter(None, None, None)
    assert found.adaptive and found.max_concurrent == ADAPTIVE_CEILING == 256
    # a run's first wave (critic batches and the inputs asked beside them) leaves at once; the
    # judges start lower
    assert found.level == RUN_START == 64 > START
    pinned = make_limiter(7, 30.0, None)
    assert not pinned.adaptive and pinned.level == pinned.max_concurrent == 7


def test_a_pinned_run_records_its_fixed_level_in_the_manifest(tmp_path: Path) -> None:
    from synth import FunctionModel, Synthesizer

    model = FunctionModel(lambda prompt, system: "{}", name="gen")
    synth = Synthesizer(
        model, embedder="hash", max_concurrent=3, cache=None, run_dir=tmp_path / "r"
    )
    with pytest.warns(UserWarning):  # empty replies: no golden, a shortfall; the manifest stands
        synth.generate_goldens_from_contexts([["Water boils at 100 degrees."]], num_goldens=1)
    manifest = synth.manifest
    assert manifest is not None
    assert manifest["concurrency"] == {
        "adaptive": False,
        "max_concurrent": 3,
        "level": 3,
        "peak_in_flight": manifest["concurrency"]["peak_in_flight"],
        "paced_by_provider": False,
        "holds": 0,
    }
    synth.close()
