"""Store writes in one background thread, in order, while the caller reads the next files.

A remote embedder or a Chroma server waits on the network, so embedding and storing one batch
overlaps with parsing and chunking the next files. (Embedded Chroma's insert holds the GIL for its
whole native call, so with it little overlaps.) At most ``depth`` batches wait, so memory stays
bounded.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

Job = TypeVar("Job")

_STOP = object()


class BackgroundWriter(Generic[Job]):
    """Runs ``work(job)`` for each submitted job, one at a time and in order, in its own thread.

    The first error a job raises is raised again in the caller: by the next :meth:`submit` or by
    :meth:`finish`. Jobs submitted after a failure are dropped. Use it as a context manager so the
    thread always ends: leaving the block on an error drops the jobs still waiting.
    """

    def __init__(
        self,
        work: Callable[[Job], None],
        *,
        depth: int | None = 1,
        name: str = "writer",
        paused: bool = False,
    ) -> None:
        """``depth`` None queues without bound; ``paused`` holds the jobs until :meth:`resume`."""
        self._work = work
        self._queue: queue.Queue[object] = queue.Queue(
            maxsize=0 if depth is None else max(1, depth)
        )
        self._error: BaseException | None = None
        self._cancelled = False
        self._finished = False
        self._then: Callable[[], None] | None = None  # called by the thread as it ends
        self._go = threading.Event()
        if not paused:
            self._go.set()
        self._thread = threading.Thread(target=self._run, name=f"synth-{name}", daemon=False)
        self._thread.start()

    def resume(self) -> None:
        """Start on the jobs (of a writer made ``paused``)."""
        self._go.set()

    def submit(self, job: Job) -> None:
        """Queue ``job`` (waiting while ``depth`` jobs already wait)."""
        self.raise_if_failed()
        self._queue.put(job)

    def finish(self) -> None:
        """Wait until every queued job is done; raise the first job error, if any."""
        self._stop()
        self.raise_if_failed()

    def cancel(self) -> None:
        """Drop the jobs still waiting and wait for the one under way; raises nothing."""
        self._cancelled = True
        self._stop()

    def cancel_then(self, then: Callable[[], None]) -> None:
        """Drop the jobs still waiting and return at once: the job under way ends in the writer's
        thread, which then calls ``then()`` (at once here when no thread runs any more)."""
        if self._finished or not self._thread.is_alive():
            self._cancelled = self._finished = True
            then()
            return
        self._then = then
        self._cancelled = self._finished = True
        self._go.set()
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(_STOP)

    def __enter__(self) -> BackgroundWriter[Job]:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self.cancel()  # the caller failed: what still waits is not wanted
        else:
            self._stop()

    def _stop(self) -> None:
        if not self._finished:
            self._finished = True
            self._queue.put(_STOP)
            self._go.set()
            self._thread.join()

    def raise_if_failed(self) -> None:
        """Raise the first job error so far, if any, without waiting."""
        if self._error is not None:
            raise self._error

    def _run(self) -> None:
        try:
            self._go.wait()
            while not (self._cancelled and self._then is not None):
                job = self._queue.get()
                if job is _STOP:
                    return
                if self._error is not None or self._cancelled:
                    continue
                try:
                    self._work(job)  # type: ignore[arg-type]
                except BaseException as exc:  # handed over to the caller's thread
                    self._error = exc
        finally:
            if self._then is not None:
                self._then()


__all__ = ["BackgroundWriter"]
