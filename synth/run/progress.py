"""The live progress display of a run: each stage's done/total, goldens so far, requests in
flight, retries and cost so far. ``NullProgress`` shows nothing (``--quiet``, ``--json``, library
use without a display)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text


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


def render(snap: Snapshot) -> Any:
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("stage")
    table.add_column("done", justify="right")
    for name, done, total in snap.stages:
        table.add_row(name, f"{done}/{total}")
    target = f"/{snap.target}" if snap.target is not None else ""
    line = Text(
        f"goldens {snap.goldens}{target}   in flight {snap.in_flight}   requests {snap.requests}"
        f" (cached {snap.cached})   retries {snap.retries}   cost ${snap.cost_usd:.4f}"
    )
    parts: list[Any] = [Text(snap.title, style="bold")] if snap.title else []
    return Group(*parts, table, line)


class RichProgress:
    """A live display on ``console`` (stderr by default), refreshed a few times a second."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._live: Live | None = None
        self._snapshot: Callable[[], Snapshot] | None = None

    def start(self, snapshot: Callable[[], Snapshot]) -> None:
        self._snapshot = snapshot
        self._live = Live(
            get_renderable=lambda: render(snapshot()),
            console=self.console,
            refresh_per_second=4,
            transient=True,
        )
        self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            if self._snapshot is not None:
                self.console.print(render(self._snapshot()))

    def note(self, text: str) -> None:
        self.console.print(Text(text))


__all__ = ["NullProgress", "Progress", "RichProgress", "Snapshot", "render"]
