"""Adaptive concurrency: how many requests to keep in flight, found from the replies themselves.

Additive increase, multiplicative decrease (AIMD), as TCP finds its window:

- the level starts at :data:`START` (at most the ceiling) and, while no reply has said "too much",
  grows by :data:`GROWTH` per reply while replies come back as fast as the first ones did (slow
  start: it quadruples every round trip), by one per reply once they slow at all (it doubles);
- once a 429 or a timeout has come back, or the latency has risen, it grows by one per round trip
  (one per ``level`` replies), except that after a cut by a 429 of a rate limit (one that says to
  wait :data:`RATE_WAIT` seconds or more: a window that frees later, not a count in flight) it
  grows back by one per reply (doubling every round trip, as TCP's fast recovery does) until it
  is at :data:`RECOVER_TO` of the level it was cut from: such a 429 says the rate was too high
  for a moment, not that the level was twice too high, and creeping back by one per round trip
  left a run under a requests-per-minute limit at two thirds of the rate it was allowed;
- a 429 or a timeout cuts it by :data:`DECREASE`, once per round trip: the other replies of
  requests sent before the cut say the same thing and do not cut again;
- it only grows while the latency stays flat: each label's (each stage's) recent latency, a moving
  average, is compared with the mean of its first replies; above :data:`LATENCY_SLACK` times that
  the server is queueing, and the level holds. In slow start, where the level doubles before the
  average can follow, :data:`SLOW_IN_A_ROW` slow replies in a row end it (as TCP's HyStart does).

It grows only while it is put to the test (every slot taken when a reply comes, a request
waiting, or at least half the slots in use, as RFC 7661 lets TCP's window grow), so a quiet
phase of the run does not raise it untested. The level never leaves ``[1, ceiling]``.
:class:`ConcurrencyControl` only does the arithmetic; the limiter
(:class:`~synth.llm.limiter.RateLimiter`) holds the lock and resizes its slots.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: the level a run starts at: safe for a small local server, reached by any account
START = 8
#: how much each reply grows the level in slow start (while every slot is taken): by three, so
#: the level quadruples every round trip, and a run's waves of requests (each stage several
#: times the one before: critic, inputs, then filter and evolve together) find room in one or
#: two round trips where doubling left each wave's tail a round trip behind
GROWTH = 3
#: a reply within this many times its label's baseline grows the level by :data:`GROWTH`; a
#: slower one (the server starts to queue, long before it is twice as slow) by one only
QUICK_SLACK = 1.25
#: the factor a 429 or a timeout multiplies the level by
DECREASE = 0.5
#: recent latency above this many times a label's first latency: the server queues, hold
LATENCY_SLACK = 2.0
#: replies per label whose latency makes its baseline
BASELINE_REPLIES = 8
#: weight of the newest reply in the moving average of a label's latency
SMOOTHING = 0.2
#: slow replies in a row (each above LATENCY_SLACK times the baseline) that end slow start
SLOW_IN_A_ROW = 3
#: after a rate limit's cut the level grows by one per reply up to this share of the level it
#: was cut from
RECOVER_TO = 0.9
#: a 429 that says to wait this many seconds or more is a rate limit's (its window frees later)
RATE_WAIT = 1.0


@dataclass
class _Latency:
    """A label's baseline (the mean of its first replies) and its moving average since."""

    replies: int = 0
    baseline: float = 0.0
    recent: float = 0.0
    slow_in_a_row: int = 0

    def add(self, seconds: float) -> None:
        self.replies += 1
        if self.replies <= BASELINE_REPLIES:
            self.baseline += (seconds - self.baseline) / self.replies
            self.recent = self.baseline
            return
        self.recent += SMOOTHING * (seconds - self.recent)
        slow = seconds > LATENCY_SLACK * self.baseline
        self.slow_in_a_row = self.slow_in_a_row + 1 if slow else 0

    @property
    def flat(self) -> bool:
        return self.replies <= BASELINE_REPLIES or self.recent <= LATENCY_SLACK * self.baseline


@dataclass
class ConcurrencyControl:
    """The AIMD level between 1 and ``ceiling``; see the module. Not thread-safe by itself."""

    ceiling: int
    start: int = START
    level: int = 0
    peak: int = 0
    #: how many cuts so far; a request remembers the epoch it was sent in
    epoch: int = 0
    slow_start: bool = True
    signals: Counter[str] = field(default_factory=Counter)
    _replies_at_level: int = 0
    _latency: dict[str, _Latency] = field(default_factory=dict)
    #: the level grows by one per reply until here (after a cut; see the module)
    _recover_below: int = 0

    def __post_init__(self) -> None:
        self.level = self.peak = max(1, min(self.start, self.ceiling))

    def on_reply(self, label: str | None, seconds: float, *, full: bool = True) -> int:
        """The level after a reply that took ``seconds``; ``full``: the level was put to the
        test while it was out (see the module)."""
        latency = self._latency.setdefault(label or "", _Latency())
        latency.add(seconds)
        if latency.slow_in_a_row >= SLOW_IN_A_ROW or not latency.flat:
            self.slow_start = False  # the server queues: from now on, probe slowly
        if not full or not latency.flat or self.level >= self.ceiling:
            return self.level
        self._replies_at_level += 1
        if not self.slow_start and self.level < self._recover_below:
            self._replies_at_level = 0
            self.level = min(self.level + 1, self.ceiling)
            self.peak = max(self.peak, self.level)
            return self.level
        if self.slow_start or self._replies_at_level >= self.level:
            self._replies_at_level = 0
            quick = seconds <= QUICK_SLACK * latency.baseline
            self.level = min(
                self.level + (GROWTH if self.slow_start and quick else 1), self.ceiling
            )
            self.peak = max(self.peak, self.level)
        return self.level

    def on_congestion(self, kind: str, sent_in: int, *, wait: float | None = None) -> int:
        """The level after a 429 or a timeout (``kind``) of a request sent in epoch ``sent_in``;
        ``wait``: the seconds the 429 said to wait (see :data:`RATE_WAIT`)."""
        self.signals[kind] += 1
        if sent_in == self.epoch:  # the first word of this round trip: cut once
            rate = wait is not None and wait >= RATE_WAIT
            self._recover_below = int(self.level * RECOVER_TO) if rate else 0
            self.level = max(1, int(self.level * DECREASE))
            self.epoch += 1
            self.slow_start = False
            self._replies_at_level = 0
        return self.level

    def report(self) -> dict[str, Any]:
        """What a manifest records: start, level now, peak, cuts and the signals by kind."""
        return {
            "start": max(1, min(self.start, self.ceiling)),
            "level": self.level,
            "peak_level": self.peak,
            "cuts": self.epoch,
            "signals": dict(sorted(self.signals.items())),
        }


__all__ = [
    "DECREASE",
    "GROWTH",
    "LATENCY_SLACK",
    "QUICK_SLACK",
    "RATE_WAIT",
    "RECOVER_TO",
    "START",
    "ConcurrencyControl",
]
