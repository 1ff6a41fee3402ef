"""The ingest's background writer: jobs in order, errors handed back, the thread always ends."""

from __future__ import annotations

import threading

import pytest

from synth.errors import StoreError
from synth.store._writer import BackgroundWriter


def _threads() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


def test_jobs_run_in_order_in_another_thread() -> None:
    done: list[tuple[int, str]] = []
    with BackgroundWriter(lambda n: done.append((n, threading.current_thread().name))) as writer:
        for n in range(20):
            writer.submit(n)
        writer.finish()
    assert [n for n, _ in done] == list(range(20))
    assert {name for _, name in done} == {"synth-writer"}
    assert "synth-writer" not in _threads()


def test_the_first_error_reaches_the_caller_and_later_jobs_are_dropped() -> None:
    release = threading.Event()
    done: list[int] = []

    def work(n: int) -> None:
        if n == 2:
            release.wait()
            raise StoreError("disk full")
        done.append(n)

    with pytest.raises(StoreError, match="disk full"):
        with BackgroundWriter(work) as writer:
            for n in range(6):
                writer.submit(n)
                if n == 3:
                    release.set()
            writer.finish()
    assert done == [0, 1]  # nothing after the failed job ran
    assert "synth-writer" not in _threads()


def test_a_failing_caller_drops_the_jobs_still_waiting() -> None:
    started, release = threading.Event(), threading.Event()
    done: list[int] = []

    class Probe(BackgroundWriter[int]):
        def _stop(self) -> None:
            release.set()  # the first job ends only once the writer is told to stop
            super()._stop()

    def work(n: int) -> None:
        started.set()
        release.wait()
        done.append(n)

    with pytest.raises(KeyError):
        with Probe(work, depth=3) as writer:
            writer.submit(1)
            started.wait()
            writer.submit(2)
            writer.submit(3)
            raise KeyError("the caller failed")
    assert done == [1]  # the job under way finished; the two waiting were dropped
    assert "synth-writer" not in _threads()


def test_a_paused_writer_takes_every_job_without_waiting_and_starts_on_resume() -> None:
    done: list[int] = []
    with BackgroundWriter(done.append, depth=None, paused=True) as writer:
        for n in range(50):  # an unbounded queue: the caller never waits on the writer
            writer.submit(n)
        assert done == []  # nothing ran before resume
        writer.resume()
        writer.finish()
    assert done == list(range(50))


def test_cancel_drops_the_jobs_of_a_paused_writer() -> None:
    done: list[int] = []
    writer = BackgroundWriter(done.append, depth=None, paused=True)
    for n in range(5):
        writer.submit(n)
    writer.cancel()
    assert done == [] and "synth-writer" not in _threads()
