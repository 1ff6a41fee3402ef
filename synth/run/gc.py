"""The garbage collector during a run: what the process held before the run is not scanned again.

A process that has imported chromadb, the openai SDK, pydantic and numpy holds about 175,000
objects the collector tracks, more once a corpus is read. A full collection walks all of them,
0.1-0.3 s with every request thread stopped, and a run of a few hundred requests makes enough
objects to trigger one or more. Freezing the objects that exist when the run starts
(:func:`gc.freeze`) takes them out of every collection until the run ends; what the run itself
makes is collected as usual. The run's objects that die in a cycle still go, and so does what was
frozen, once the run is over.

Freezing changes the collector of the whole process, which a library call has no business doing
on its own: runs freeze only once the program that owns the process has asked for it with
:func:`freeze_heap_during_runs` (the ``synth`` command does). Nothing is changed either when the
collector is off or something else has frozen objects already (a server that froze before
forking, say): they are the caller's to manage. Runs that overlap in one process share one freeze,
undone when the last of them ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_allowed = False  # whether the program asked its runs to freeze the heap
_runs = 0  # runs in progress in this process
_frozen = False  # whether the first of them froze the heap (and the last must unfreeze it)


def freeze_heap_during_runs(enabled: bool = True) -> None:
    """Let the runs of this process freeze the heap they start with (False: stop letting them).

    A choice for the program that owns the process, made once at its start (see the module)."""
    global _allowed
    with _lock:
        _allowed = enabled


@contextmanager
def frozen_heap() -> Iterator[None]:
    """A block (a run) during which the objects alive at its start are frozen, when the program
    asked for it with :func:`freeze_heap_during_runs`; otherwise the collector is left alone."""
    global _runs, _frozen
    with _lock:
        if _runs == 0:
            _frozen = _allowed and gc.isenabled() and gc.get_freeze_count() == 0
            if _frozen:
                gc.freeze()
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0 and _frozen:
                gc.unfreeze()
                _frozen = False


__all__ = ["freeze_heap_during_runs", "frozen_heap"]
