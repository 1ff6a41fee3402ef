"""The live progress display of a run: each stage's done/total, goldens so far, requests in
flight, retries and cost so far. ``NullProgress`` shows nothing (``--quiet``, ``--json``,
``Synthesizer(progress=False)``); ``TextProgress`` is the Python API's default, plain text on
stderr (the command line draws its own, richer display from the same :class:`Snapshot`)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, TextIO


@dataclass
class Snapshot:
    """What the display shows at one moment."""

    title: str = ""
    stages: list[tuple[str, int, int]] = field(default_factory=list)  # name, done, total
    goldens: int = 0
    target: int | None = None
    in_flight: int = 0
    requests: int = 0
    cached: int = 0
    retries: int = 0
    cost_usd: float = 0.0


class Progress(Protocol):
    """What a run calls on its display."""

    def start(self, snapshot: Callable[[], Snapshot]) -> None: ...

    def stop(self) -> None: ...

    def note(self, text: str) -> None: ...


class NullProgress:
    """Shows nothing."""

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        return None

    def stop(self) -> None:
        return None

    def note(self, text: str) -> None:
        return None


def summary_line(snap: Snapshot) -> str:
    """One line of a snapshot's totals: goldens so far (of the target), requests in flight,
    requests (cached), retries and cost."""
    target = f"/{snap.target}" if snap.target is not None else ""
    return (
        f"goldens {snap.goldens}{target}   in flight {snap.in_flight}   requests {snap.requests}"
        f" (cached {snap.cached})   retries {snap.retries}   cost ${snap.cost_usd:.4f}"
    )


def _stage_part(snap: Snapshot) -> str:
    """The first stage not done yet, as ``name done/total`` (empty when every stage is done)."""
    for name, done, total in snap.stages:
        if done < total:
            return f"{name} {done}/{total}   "
    return ""


class TextProgress:
    """Plain text progress on stderr, a :class:`Progress`: on a terminal one line rewritten in
    place a few times a second; elsewhere (a notebook, a pipe, a log) a line every ``interval``
    seconds when something changed, and the last one when the run ends.

    The stream is looked up at each write (``sys.stderr`` by default), so a redirection made after
    the display was made (a notebook's, a test's capture) is honoured; stdout is never written.
    """

    def __init__(
        self, stream: Callable[[], TextIO] | None = None, interval: float | None = None
    ) -> None:
        self._stream = stream or (lambda: sys.stderr)
        self._interval = interval
        self._snapshot: Callable[[], Snapshot] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last = ""
        self._lock = threading.Lock()

    def _terminal(self) -> bool:
        isatty = getattr(self._stream(), "isatty", None)
        return bool(isatty and isatty())

    def _line(self) -> str:
        assert self._snapshot is not None
        snap = self._snapshot()
        title = f"synth {snap.title}: " if snap.title else "synth: "
        return f"{title}{_stage_part(snap)}{summary_line(snap)}"

    def _write(self, line: str, *, final: bool = False) -> None:
        with self._lock:
            stream = self._stream()
            if self._terminal():
                # \r and erase-to-end: the line is redrawn in place; the last one stays
                stream.write(f"\r{line}\x1b[K" + ("\n" if final else ""))
            elif line != self._last or final:
                stream.write(line + "\n")
            self._last = line
            stream.flush()

    def _refresh(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self._write(self._line())

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        self._snapshot = snapshot
        self._stop.clear()
        self._last = ""
        interval = self._interval or (0.25 if self._terminal() else 5.0)
        self._thread = threading.Thread(
            target=self._refresh, args=(interval,), name="synth-progress", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._write(self._line(), final=True)

    def note(self, text: str) -> None:
        with self._lock:
            stream = self._stream()
            stream.write(("\r\x1b[K" if self._terminal() else "") + f"synth: {text}\n")
            stream.flush()


def as_progress(choice: Progress | bool | None) -> Progress | None:
    """The display ``Synthesizer(progress=...)`` asks for: True the default :class:`TextProgress`,
    False or None none, a :class:`Progress` itself."""
    if choice is True:
        return TextProgress()
    if choice is False or choice is None:
        return None
    return choice


__all__ = ["NullProgress", "Progress", "Snapshot", "TextProgress", "as_progress", "summary_line"]
