"""Pacing: at most N requests in flight, and optional requests- and tokens-per-minute budgets.

N is fixed, or with ``adaptive=True`` found by the limiter itself between 1 and the ceiling
``max_concurrent`` (additive increase, multiplicative decrease on 429s and timeouts; see
:mod:`synth.llm._aimd`): the slots are resized as replies come in.

A :class:`RateLimiter` works across threads and event loops (a sync ``complete`` runs its own loop,
and evaluators call it from several threads), so it is built on a thread lock and hands freed slots
to waiting coroutines on their own loop. Budgets are sliding windows: no more than ``rpm`` requests
start, and no more than ``tpm`` tokens are spent, within any ``window`` seconds. A request's tokens
are estimated before it is sent (prompt tokens plus ``max_tokens``) and corrected by the reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import Any

from pydantic import BaseModel

from synth.errors import ConfigError, ModelTimeoutError, RateLimitError
from synth.llm._aimd import START, ConcurrencyControl
from synth.llm.base import LLM, Completion
from synth.llm.wrapper import WrapperModel


class _Slots:
    """A counting semaphore usable from any thread and any event loop."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._free = size
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self.in_use_peak = 0
        #: requests that found every slot taken and waited, so far
        self.held_back = 0

    @property
    def in_use(self) -> int:
        return self.size - self._free

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._take()
                return
            future: asyncio.Future[None] = loop.create_future()
            waiter = (loop, future)
            self._waiters.append(waiter)
            self.held_back += 1
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                    granted = False
                else:  # a slot was handed over (or is on its way and will be passed on)
                    granted = future.done() and not future.cancelled()
            if granted:
                self.release()
            raise

    def _take(self) -> None:
        self._free -= 1
        self.in_use_peak = max(self.in_use_peak, self.size - self._free)

    def release(self) -> None:
        with self._lock:
            # over the size (it shrank while the slot was held): the slot is not passed on
            if self._free >= 0 and self._hand_over():
                return  # the slot moves to the waiter without being freed
            self._free += 1

    def resize(self, size: int) -> None:
        """Hold ``size`` slots from now on: more wake waiters at once; fewer are taken back as
        the requests holding them end."""
        with self._lock:
            self._free += size - self.size
            self.size = size
            while self._free > 0 and self._waiters:
                self._free -= 1
                if not self._hand_over():
                    self._free += 1

    def _hand_over(self) -> bool:
        """Give a held slot to the first waiter whose loop is open (under the lock)."""
        while self._waiters:
            loop, future = self._waiters.popleft()
            try:
                loop.call_soon_threadsafe(self._grant, future)
            except RuntimeError:  # that loop is closed; try the next waiter
                continue
            return True
        return False

    def _grant(self, future: asyncio.Future[None]) -> None:
        if future.done():  # cancelled meanwhile: pass the slot on
            self.release()
        else:
            with self._lock:
                self.in_use_peak = max(self.in_use_peak, self.size - self._free)
            future.set_result(None)


class _Window:
    """At most ``limit`` units spent within any ``window`` seconds (a sliding log)."""

    def __init__(self, limit: float, window: float) -> None:
        self.limit = limit
        self.window = window
        self._lock = threading.Lock()
        self._log: deque[list[float]] = deque()  # [start time, amount]
        self._used = 0.0

    def _expire(self, now: float) -> None:
        while self._log and now - self._log[0][0] >= self.window:
            self._used -= self._log.popleft()[1]

    def try_acquire(self, amount: float, now: float) -> tuple[list[float] | None, float]:
        """Spend ``amount`` at time ``now`` if the budget allows: ``(entry, 0)``, else ``(None, wait)``."""
        with self._lock:
            self._expire(now)
            if self._used + amount <= self.limit or not self._log:
                entry = [now, amount]
                self._log.append(entry)
                self._used += amount
                return entry, 0.0
            freed, wait = 0.0, self.window
            for start, spent in self._log:
                freed += spent
                if self._used - freed + amount <= self.limit:
                    wait = start + self.window - now
                    break
            return None, max(wait, 0.001)

    async def acquire(self, amount: float) -> list[float]:
        while True:
            entry, wait = self.try_acquire(amount, time.monotonic())
            if entry is not None:
                return entry
            await asyncio.sleep(wait)

    def adjust(self, entry: list[float], amount: float) -> None:
        """Correct what a request really spent, once its reply is in."""
        with self._lock:
            if entry in self._log:
                self._used += amount - entry[1]
            entry[1] = amount


class RateLimiter:
    """Concurrency, requests-per-minute and tokens-per-minute limits; share one across models to
    share the budget (for example several stages calling the same deployment).

    ``adaptive=True`` makes ``max_concurrent`` a ceiling: the level starts at ``start`` and follows
    the replies (:mod:`synth.llm._aimd`); :meth:`concurrency` says where it went.
    """

    def __init__(
        self,
        max_concurrent: int = 16,
        *,
        rpm: float | None = None,
        tpm: float | None = None,
        window: float = 60.0,
        adaptive: bool = False,
        start: int = START,
    ) -> None:
        if max_concurrent < 1:
            raise ConfigError(f"max_concurrent must be at least 1, got {max_concurrent}")
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise ConfigError(f"{name} must be positive, got {value}")
        if window <= 0:
            raise ConfigError(f"window must be positive, got {window}")
        if start < 1:
            raise ConfigError(f"start must be at least 1, got {start}")
        self.max_concurrent = max_concurrent
        self.rpm, self.tpm, self.window = rpm, tpm, window
        self._control = ConcurrencyControl(max_concurrent, start) if adaptive else None
        self._control_lock = threading.Lock()
        self._slots = _Slots(self._control.level if self._control else max_concurrent)
        self._requests = _Window(rpm, window) if rpm else None
        self._tokens = _Window(tpm, window) if tpm else None

    @property
    def adaptive(self) -> bool:
        return self._control is not None

    @property
    def level(self) -> int:
        """How many requests may be in flight now (``max_concurrent`` unless adaptive)."""
        return self._slots.size

    @property
    def in_flight(self) -> int:
        return self._slots.in_use

    @contextlib.asynccontextmanager
    async def slot(self, label: str | None = None) -> AsyncIterator[None]:
        """Hold one of the slots (and one request of the ``rpm`` budget) for a request made
        outside a model, such as a call to a remote embedder; its reply, a 429 or a timeout,
        moves an adaptive level like a model's."""
        await self._slots.acquire()
        try:
            if self._requests is not None:
                await self._requests.acquire(1)
            with self.watch(label):
                yield
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def watch(self, label: str | None) -> Iterator[None]:
        """Time the request made inside: its reply, a 429 or a timeout moves an adaptive level."""
        control = self._control
        if control is None:
            yield
            return
        sent_in, started, held_back = control.epoch, time.monotonic(), self._slots.held_back
        half_used = 2 * self._slots.in_use >= self._slots.size  # when this request went out
        try:
            yield
        except (RateLimitError, ModelTimeoutError) as exc:
            with self._control_lock:
                self._slots.resize(control.on_congestion(exc.kind, sent_in))
            raise
        with self._control_lock:
            # the level was put to the test while this one was out: at least half the slots in
            # use when it went out or now (its own still held; as TCP's congestion window grows
            # only while at least half used, RFC 7661: a run's first wave, the level half used,
            # grew it for the next, twice as large, which found no room), or a request had to
            # wait meanwhile (a reply that comes in a burst, its slot and the others' freed
            # before the next wave is asked, still counts)
            slots = self._slots
            half_used = half_used or 2 * slots.in_use >= slots.size
            full = half_used or slots.held_back > held_back
            level = control.on_reply(label, time.monotonic() - started, full=full)
            if level != self._slots.size:
                self._slots.resize(level)

    @property
    def peak_in_flight(self) -> int:
        return self._slots.in_use_peak

    def concurrency(self) -> dict[str, Any]:
        """What a manifest records: fixed or adaptive, the ceiling, the level reached (adaptive:
        where it started, its peak, its cuts and the 429s and timeouts that caused them)."""
        found: dict[str, Any] = {
            "adaptive": self.adaptive,
            "max_concurrent": self.max_concurrent,
            "level": self.level,
            "peak_in_flight": self.peak_in_flight,
        }
        if self._control is not None:
            with self._control_lock:
                found.update(self._control.report())
        return found

    def __repr__(self) -> str:
        adaptive = ", adaptive=True" if self.adaptive else ""
        return (
            f"RateLimiter(max_concurrent={self.max_concurrent}, rpm={self.rpm}, tpm={self.tpm}"
            f"{adaptive})"
        )


class LimitedModel(WrapperModel):
    """Holds a slot of ``limiter`` (and its budgets) for each request to ``inner``."""

    def __init__(self, inner: LLM, limiter: RateLimiter, *, max_tokens: int | None = None) -> None:
        super().__init__(inner)
        self.limiter = limiter
        self.max_tokens = max_tokens

    def _estimate(self, prompt: str, system: str | None) -> int:
        from synth.llm.pricing import estimate_tokens

        return estimate_tokens(prompt, system=system) + (self.max_tokens or 0)

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        limiter = self.limiter
        await limiter._slots.acquire()
        try:
            if limiter._requests is not None:
                await limiter._requests.acquire(1)
            tokens, spent = limiter._tokens, None
            if tokens is not None:
                spent = await tokens.acquire(self._estimate(prompt, system))
            with limiter.watch(label):
                completion = await self.inner.arequest(
                    prompt, system=system, schema=schema, label=label
                )
            if tokens is not None and spent is not None and completion.input_tokens is not None:
                tokens.adjust(spent, completion.input_tokens + (completion.output_tokens or 0))
            return completion
        finally:
            limiter._slots.release()

    def __repr__(self) -> str:
        return f"LimitedModel({self.inner!r}, {self.limiter!r})"


__all__ = ["LimitedModel", "RateLimiter"]
