"""Threads for calls that wait on the network, started off the thread that hands them work.

A ``ThreadPoolExecutor`` starts a thread inside ``submit`` when none is idle, and
``Thread.start`` returns only once the new thread runs. On a busy machine that is a wait for
the operating system and the interpreter's lock: 2.4 ms a thread in bench/cli.py's generate
command (92 threads, 0.22 s of the event loop, most of it while a wave of requests was being
sent). :class:`IOThreads` queues the call and returns at once; an idle thread takes it, or one
that a starter thread of its own starts meanwhile (started ahead, while the files were read,
they cost the start of the run more than they saved: measured).

Its threads are daemons: an interpreter that exits does not wait for a request in flight (a
``ThreadPoolExecutor`` joins its threads at exit, so a stopped command waited for its requests'
replies).
"""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

T = TypeVar("T")


class _Call:
    """One submitted call and the future that gets its outcome."""

    __slots__ = ("args", "fn", "future", "kwargs")

    def __init__(
        self, future: Future[Any], fn: Callable[..., Any], args: tuple[Any, ...], kwargs: Any
    ) -> None:
        self.future, self.fn, self.args, self.kwargs = future, fn, args, kwargs

    def run(self) -> Callable[[], None]:
        """Make the call; what hands its outcome to the future (the worker counts itself idle
        first, so that a caller woken by the outcome and submitting again finds it idle)."""
        future = self.future
        if not future.set_running_or_notify_cancel():
            return _nothing
        try:
            result = self.fn(*self.args, **self.kwargs)
        except BaseException as exc:  # the caller gets it through the future
            return functools.partial(future.set_exception, exc)
        return functools.partial(future.set_result, result)


def _nothing() -> None:
    pass


class IOThreads(Executor):
    """At most ``max_workers`` threads named ``name_N``, started by a thread of their own."""

    def __init__(self, max_workers: int, name: str) -> None:
        if max_workers < 1:
            raise ValueError(f"max_workers must be at least 1, got {max_workers}")
        self.max_workers = max_workers
        self.name = name
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._asked = threading.Condition(self._lock)
        self._threads: list[threading.Thread] = []
        self._wanted = 0  # threads started or asked of the starter
        self._to_start = 0  # asked of the starter, not started yet
        self._idle = 0  # threads waiting for a call
        self._queued = 0  # calls no thread has taken yet
        self._starter: threading.Thread | None = None
        self._shut = False

    @property
    def threads(self) -> int:
        """Threads started so far (the starter's own not counted)."""
        return len(self._threads)

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._queued += 1
            self._calls.put(_Call(future, fn, args, kwargs))
            if self._queued > self._idle:
                self._ask(1)
        return future

    def _ask(self, count: int) -> None:
        """Ask the starter for ``count`` more threads, within ``max_workers`` (under the lock)."""
        count = min(count, self.max_workers - self._wanted)
        if count <= 0:
            return
        self._wanted += count
        self._to_start += count
        if self._starter is None:
            self._starter = threading.Thread(
                target=self._start_threads, name=f"{self.name}-starter", daemon=True
            )
            self._starter.start()
        self._asked.notify()

    def _start_threads(self) -> None:
        """The starter: start the threads asked for, until shutdown and none is left to start."""
        while True:
            with self._lock:
                while not self._to_start and not self._shut:
                    self._asked.wait()
                if not self._to_start:
                    return
                self._to_start -= 1
                number = len(self._threads)
            thread = threading.Thread(target=self._work, name=f"{self.name}_{number}", daemon=True)
            thread.start()
            with self._lock:
                self._threads.append(thread)

    def _work(self) -> None:
        with self._lock:
            self._idle += 1
        while True:
            call = self._calls.get()
            with self._lock:
                self._idle -= 1
                if call is not None:
                    self._queued -= 1
            if call is None:
                return
            publish = call.run()
            with self._lock:
                self._idle += 1
            publish()
            del call, publish  # the arguments and outcome are not kept while the thread waits

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No more calls; with ``cancel_futures`` the ones no thread has taken are cancelled.
        Every thread ends after the calls before it; ``wait``: return once they have."""
        with self._lock:
            if not self._shut:
                self._shut = True
                if cancel_futures:
                    while True:
                        try:
                            call = self._calls.get_nowait()
                        except queue.Empty:
                            break
                        if call is not None:
                            self._queued -= 1
                            call.future.cancel()
                for _ in range(self._wanted):
                    self._calls.put(None)
                self._asked.notify()
            starter = self._starter
        if wait:
            if starter is not None:
                starter.join()
            for thread in list(self._threads):
                thread.join()


__all__ = ["IOThreads"]
