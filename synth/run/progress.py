"""The live progress display of a run: each stage's done/total, goldens so far, requests in
flight, retries and cost so far. ``NullProgress`` shows nothing (``--quiet``, ``--json``, library
use without a display)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


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


__all__ = ["NullProgress", "Progress", "Snapshot"]
