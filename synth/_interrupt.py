"""Ctrl-C in the ``synth`` command: stop at once, keep what is done, exit 130 within a deadline.

Two parts, installed only when synth runs as the program (never when it is imported as a library):

- :func:`quiet_startup` (called first thing by ``synth/__init__``): while the command is still
  importing its dependencies (a second or more), Ctrl-C ends it at once with exit 130 and one line,
  not a traceback. Nothing has been done yet, so nothing is lost.
- :class:`CtrlC` (around the command itself, see ``synth.cli.main``): the first Ctrl-C (or
  SIGTERM: ``timeout``, ``docker stop``, a cancelled CI job, which take the same path) raises
  KeyboardInterrupt in the main thread at once, whatever it is doing (reading files, opening the
  store, waiting on requests), so the run unwinds: the manifest is rewritten with status
  ``interrupted``, the journals and the response cache already hold every answer received. It also
  arms a deadline: if the process has not ended :data:`GRACE` seconds later (a request thread the
  interpreter would wait for, a native call that holds the main thread), it is ended there, exit
  130. Everything done is on disk by then: the cache and the journals are written as answers come,
  and the command's :attr:`CtrlC.last_words` (the manifest marked ``interrupted``, the output's
  lock file removed) run before that forced end. A second Ctrl-C ends it at once, the same way.

The deadline is watched by a thread that reads the signal from a wakeup pipe
(:func:`signal.set_wakeup_fd`), so it starts even when the main thread is stuck in native code and
cannot run a Python signal handler.

Under an event loop, the KeyboardInterrupt is raised at once only in the task the loop runs to its
end, which :func:`as_main_task` names (``synth.llm.base.run_sync`` starts every loop of the
command that way); Ctrl-C in another task is raised by the loop between two steps. Only asyncio's
public functions are used: ``get_running_loop``, ``current_task``, ``call_soon_threadsafe``.
"""

from __future__ import annotations

import contextlib
import contextvars
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")

#: seconds from Ctrl-C to the forced end, when the orderly one has not happened by then
GRACE = 1.5
#: the exit code of a command stopped by Ctrl-C (128 + SIGINT, as shells report it)
EXIT_INTERRUPTED = 130
#: the exit code of a command stopped by SIGTERM (128 + SIGTERM, as shells report it)
EXIT_TERMINATED = 143
#: the signals that stop the command the orderly way, and the exit code of each
STOPPING = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}
#: seconds the forced end gives each of the command's last words
LAST_WORDS_WAIT = 0.5

#: the task its loop runs to the end (set by :func:`as_main_task`; the tasks it starts inherit it)
_MAIN_TASK: contextvars.ContextVar[object] = contextvars.ContextVar("synth_main_task", default=None)


def run_as_program() -> bool:
    """Whether this process is the ``synth`` command (``python -m synth`` or the script)."""
    first = sys.argv[0] if sys.argv else ""
    if first == "-m":  # python -m synth, while its package is being imported
        orig = list(getattr(sys, "orig_argv", []))
        at = orig.index("-m") if "-m" in orig else -1
        return 0 <= at < len(orig) - 1 and orig[at + 1] == "synth"
    path = Path(first)
    return path.name in ("synth", "synth.exe") or (
        path.name == "__main__.py" and path.parent.name == "synth"
    )


def _end_now(message: str, code: int = EXIT_INTERRUPTED) -> NoReturn:
    """Write ``message`` to stderr without Python's buffers (another thread may hold them) and
    end the process with exit ``code`` at once."""
    try:
        os.write(2, message.encode("utf-8", "replace"))
    finally:
        os._exit(code)


def _startup_handler(signum: int, frame: FrameType | None) -> None:
    _end_now("synth: interrupted\n")


def quiet_startup() -> None:
    """When running as the program: Ctrl-C before the command starts ends it quietly, exit 130."""
    if threading.current_thread() is not threading.main_thread() or not run_as_program():
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _startup_handler)


class CtrlC:
    """While the ``with`` block runs (in the main thread): Ctrl-C or SIGTERM raises
    KeyboardInterrupt at once and ends the process :data:`GRACE` seconds later if it has not ended
    by itself; a second one ends it at once. ``where`` names what a rerun resumes (the run
    directory), for the line printed when the process is ended by the deadline; ``last_words``
    are called (from another thread, each in its own try) just before that forced end."""

    def __init__(self, where: Callable[[], object] = lambda: None, grace: float = GRACE) -> None:
        self.where = where
        self.grace = grace
        self._presses = 0  # counted by the watcher, which sees each signal once
        self._raised = False  # the handler ran (the watcher may not have read the pipe yet)
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._active = False
        self._previous_handler: Any = None
        self._previous_hook: Any = sys.unraisablehook
        self._previous_fd = -1
        self._write_end = -1
        self._previous_term: Any = None
        #: the signal that stopped the command (SIGINT unless SIGTERM came first)
        self.signal: int | None = None
        #: what must be on disk even when the process is ended by force (called once each)
        self.last_words: list[Callable[[], object]] = []

    @property
    def exit_code(self) -> int:
        """The command's exit code once stopped: 130 after Ctrl-C, 143 after SIGTERM."""
        return STOPPING.get(signal.Signals(self.signal or signal.SIGINT), EXIT_INTERRUPTED)

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C was pressed since the block began (even if something swallowed it)."""
        return self._raised or self._presses > 0

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is not threading.main_thread():
            return self  # signals reach the main thread only: nothing to watch from here
        read, write = os.pipe()
        os.set_blocking(write, False)
        self._previous_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._write_end = write
        self._previous_handler = signal.signal(signal.SIGINT, self._handler)
        self._previous_term = signal.signal(signal.SIGTERM, self._handler)
        self._previous_hook = sys.unraisablehook
        sys.unraisablehook = self._unraisable
        self._active = True
        watcher = threading.Thread(target=self._watch, args=(read,), name="synth-ctrl-c")
        watcher.daemon = True
        watcher.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._active:
            return
        self._active = False
        signal.signal(signal.SIGINT, self._previous_handler)
        signal.signal(signal.SIGTERM, self._previous_term)
        sys.unraisablehook = self._previous_hook
        signal.set_wakeup_fd(self._previous_fd)
        os.close(self._write_end)  # the watcher reads the end of the pipe and stops
        # an armed deadline stays armed: the process is on its way out and must end in time

    # ---- inside -----------------------------------------------------------------------------------
    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self._raised:  # the watcher may not have read the second press yet
            self._give_up("pressed again")
        if self.signal is None:
            self.signal = signum
        self._raised = True
        self._arm()
        loop = _loop_in_a_side_task()
        if loop is not None:
            # raised inside a task's step, it would be kept by that task and raised again in
            # each task awaiting it, past the loop's own cleanup (which then never cancels the
            # run, so its manifest is not rewritten); raised by a callback of the loop, it
            # leaves the loop between two steps, as it does from the loop's wait for I/O
            loop.call_soon_threadsafe(_raise_interrupt)
            return
        raise KeyboardInterrupt

    def _unraisable(self, unraisable: Any) -> None:
        """Ctrl-C that landed in a weakref callback or a finalizer, where Python can only print
        it ("Exception ignored in ...", a traceback): not printed, and raised again where the
        run unwinds (the loop's next step) when a loop runs here; else the command ends at
        :attr:`interrupted` or the deadline, as for any interrupt something swallowed."""
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            self._previous_hook(unraisable)
            return
        loop = _running_loop()
        if loop is not None:
            loop.call_soon_threadsafe(_raise_interrupt)

    def _watch(self, read: int) -> None:
        try:
            while data := os.read(read, 64):
                for signum in (s for s in data if s in STOPPING):
                    if self.signal is None:
                        self.signal = signum
                    self._presses += 1
                    if self._presses > 1:
                        self._give_up("pressed again")
                    self._arm()
        finally:
            os.close(read)

    def _arm(self) -> None:
        """Start the deadline (once), and stop the garbage collector: the process is ending, and a
        full collection of a large heap would hold every thread for seconds on a busy machine."""
        gc.disable()
        with self._lock:
            if self._timer is None:
                self._timer = threading.Timer(self.grace, self._give_up, ("still running",))
                self._timer.daemon = True
                self._timer.start()

    def exit_now(self) -> NoReturn:
        """End the process with its :attr:`exit_code` once the command has unwound after Ctrl-C:
        what it did is written, and the interpreter's shutdown (waiting for request threads,
        collecting the heap) would only delay the exit."""
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(self.exit_code)

    def _say_last_words(self) -> None:
        """Call each of :attr:`last_words` once, each in its own thread for at most
        :data:`LAST_WORDS_WAIT` seconds (a write stuck on a full disk must not hold the end)."""
        words, self.last_words = self.last_words, []
        for word in words:
            thread = threading.Thread(target=_quietly, args=(word,), daemon=True)
            thread.start()
            thread.join(LAST_WORDS_WAIT)

    def _give_up(self, why: str) -> None:
        self._say_last_words()
        where = self.where()
        kept = (
            f"; everything done so far is kept in {where}: run the same command again to resume"
            if where
            else ""
        )
        _end_now(
            f"synth: interrupted ({why}: ended without waiting for work under way){kept}\n",
            self.exit_code,
        )


async def as_main_task(coro: Coroutine[Any, Any, T]) -> T:
    """``coro``'s result, awaited as the task in which Ctrl-C raises KeyboardInterrupt at once,
    whatever it is doing (reading files): wrap the coroutine a loop runs to its end with it
    (``asyncio.run(as_main_task(coro))``)."""
    import asyncio

    _MAIN_TASK.set(asyncio.current_task())
    return await coro


def _running_loop() -> Any:
    """The event loop running in this thread, or None. (asyncio is looked up, not imported: a
    process that never loaded it runs no loop.)"""
    aio = sys.modules.get("asyncio")
    if aio is None:
        return None
    try:
        return aio.get_running_loop()
    except RuntimeError:
        return None


def _loop_in_a_side_task() -> Any:
    """The event loop running in this thread, when one of its tasks other than its main one (see
    :func:`as_main_task`) is running now; else None: between the loop's steps, and in the main
    task, the interrupt unwinds the run as it should."""
    loop = _running_loop()
    if loop is None:
        return None
    task = sys.modules["asyncio"].current_task(loop)
    return None if task is None or task is _MAIN_TASK.get() else loop


def _raise_interrupt() -> NoReturn:
    raise KeyboardInterrupt


def _quietly(word: Callable[[], object]) -> None:
    """Call ``word``; the process is ending by force, so a failure changes nothing and says
    nothing (the run's rerun finds what is on disk either way)."""
    with contextlib.suppress(Exception):
        word()


__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "GRACE",
    "CtrlC",
    "as_main_task",
    "quiet_startup",
    "run_as_program",
]
