"""synth.llm._threads: the threads blocking SDK calls run on, started off the caller's thread."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import CancelledError

import pytest

from synth.llm._threads import IOThreads


def test_calls_run_on_named_threads_and_give_their_results_and_errors() -> None:
    threads = IOThreads(4, "synth-test")
    try:
        assert threads.submit(lambda a, b=0: a + b, 2, b=3).result(timeout=10) == 5
        names = [threads.submit(lambda: threading.current_thread().name).result(timeout=10)]
        assert names[0].startswith("synth-test_")

        def fails() -> None:
            raise KeyError("boom")

        with pytest.raises(KeyError, match="boom"):
            threads.submit(fails).result(timeout=10)
    finally:
        threads.shutdown()


def test_submit_starts_no_thread_in_the_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the module: ``Thread.start`` (which waits for the new thread to run) is
    called by the starter, never by the thread that submits (an event loop's)."""
    starters: list[str] = []
    start = threading.Thread.start

    def recorded(self: threading.Thread) -> None:
        starters.append(threading.current_thread().name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", recorded)
    threads = IOThreads(8, "synth-test")
    gate = threading.Event()
    try:
        futures = [threads.submit(gate.wait, 10) for _ in range(6)]
        gate.set()
        assert all(f.result(timeout=10) for f in futures)
    finally:
        threads.shutdown()
    caller = threading.current_thread().name
    # the first submit starts the starter itself; every worker is started by the starter
    assert starters[0] == caller and caller not in starters[1:]
    assert set(starters[1:]) == {"synth-test-starter"} and threads.threads == 6


def test_at_most_max_workers_run_at_once_and_the_rest_wait_their_turn() -> None:
    threads = IOThreads(3, "synth-test")
    lock = threading.Lock()
    running, peak = 0, 0
    gate = threading.Event()

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        gate.wait(10)
        with lock:
            running -= 1
        return i

    try:
        futures = [threads.submit(work, i) for i in range(10)]
        gate.set()
        assert [f.result(timeout=10) for f in futures] == list(range(10))
    finally:
        threads.shutdown()
    assert peak <= 3 and threads.threads == 3


def test_a_thread_counts_itself_idle_before_its_caller_hears_the_outcome() -> None:
    """A caller woken by one call's outcome that submits the next (here: from the future's
    done callback, which runs before the worker takes another call) finds the thread idle,
    so one thread serves a chain of calls instead of one thread each."""
    threads = IOThreads(16, "synth-test")
    done = threading.Event()
    results: list[int] = []

    def chain(future) -> None:  # type: ignore[no-untyped-def]
        results.append(future.result())
        if len(results) < 10:
            threads.submit(abs, -len(results)).add_done_callback(chain)
        else:
            done.set()

    try:
        threads.submit(abs, 0).add_done_callback(chain)
        assert done.wait(10)
    finally:
        threads.shutdown()
    assert results == list(range(10)) and threads.threads == 1


def test_shutdown_cancels_calls_not_taken_and_refuses_new_ones() -> None:
    threads = IOThreads(1, "synth-test")
    gate, taken = threading.Event(), threading.Event()

    def hold() -> bool:
        taken.set()
        return gate.wait(10)

    busy = threads.submit(hold)
    assert taken.wait(10)  # the one thread has it: the calls below wait in the queue
    waiting = [threads.submit(lambda: "late") for _ in range(3)]
    threads.shutdown(wait=False, cancel_futures=True)
    gate.set()
    assert busy.result(timeout=10) is True
    for future in waiting:
        with pytest.raises(CancelledError):
            future.result(timeout=10)
    with pytest.raises(RuntimeError, match="after shutdown"):
        threads.submit(lambda: None)
    threads.shutdown()  # again: nothing left to do


def test_shutdown_without_cancelling_runs_what_was_submitted() -> None:
    threads = IOThreads(2, "synth-test")
    futures = [threads.submit(lambda i=i: i * i) for i in range(8)]
    threads.shutdown(wait=True)
    assert [f.result(timeout=0) for f in futures] == [i * i for i in range(8)]


def test_an_event_loop_awaits_its_calls() -> None:
    threads = IOThreads(4, "synth-test")

    async def main() -> list[int]:
        loop = asyncio.get_running_loop()
        return list(
            await asyncio.gather(*(loop.run_in_executor(threads, abs, -i) for i in range(5)))
        )

    try:
        assert asyncio.run(main()) == [0, 1, 2, 3, 4]
    finally:
        threads.shutdown()


def test_max_workers_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        IOThreads(0, "synth-test")
