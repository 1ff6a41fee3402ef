"""Pacing: at most N requests in flight, and optional requests- and tokens-per-minute budgets.

N is fixed, or with ``adaptive=True`` found by the limiter itself between 1 and the ceiling
``max_concurrent`` (additive increase, multiplicative decrease on 429s and timeouts; see
:mod:`synth.llm._aimd`): the slots are resized as replies come in.

A :class:`RateLimiter` works across threads and event loops (a sync ``complete`` runs its own loop,
and evaluators call it from several threads), so it is built on a thread lock and hands freed slots
to waiting coroutines on their own loop. Budgets are sliding windows: no more than ``rpm`` requests
start, and no more than ``tpm`` tokens are spent, within any ``window`` seconds. A request's tokens
are estimated before it is sent (prompt tokens plus ``max_tokens``) and corrected by the reply;
the estimates are scaled by how far the replies' own counts have been from them (another
tokenizer than the one synth counts with: Anthropic's, a local server's).

Pacing from the provider's own numbers: OpenAI and Anthropic state their requests and tokens
limits per minute, what is left and when it is whole again, in every reply's headers
(:mod:`synth.llm._rate_headers`). :meth:`RateLimiter.observe` paces to them: a budget not pinned by
``rpm``/``tpm`` becomes a window of the provider's limit over a minute (:data:`HEADER_MARGIN`
longer), and a window that has spent less than the provider says was spent (another client on
the same key) is charged the difference until the provider's reset. Such a window counts from the
run's first request, before any reply has said whether the provider states a budget (it is
dropped at the first reply that does not), so the provider's count and the window's hold the same
requests, each once: a reply's own tokens are counted before the provider's numbers it came with,
and each statement of the provider's count replaces the charge the last one made. A 429 that says
the budget is spent holds every request until its reset (or ``Retry-After``) and, once the
provider's numbers pace the requests, cuts no concurrency: the rate, not the number in flight,
was too high. Without such numbers a 429 still holds the requests until its ``Retry-After``; it
cuts the adaptive level once for a rate limit's whole episode (see
:meth:`RateLimiter._on_rate_limited`), which then grows back faster (:mod:`synth.llm._aimd`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from pydantic import BaseModel

from synth.errors import ConfigError, ModelTimeoutError, RateLimitError
from synth.llm._aimd import RATE_WAIT, START, ConcurrencyControl
from synth.llm._rate_headers import LIMIT_WINDOW, RATE_LIMITS, Budget, RateLimits
from synth.llm.base import LLM, Completion
from synth.llm.wrapper import WrapperModel

#: a provider's per-minute budget is paced over a window this much longer (60 s -> 61.8 s), so the
#: gap between when synth starts a request and when the provider counts it does not trip it
HEADER_MARGIN = 0.03
#: the weight of the newest reply in the moving average of :meth:`RateLimiter.learn_tokens`
TOKEN_SCALE_WEIGHT = 0.2
#: the longest a 429 holds every request (a provider's reset or Retry-After beyond it is distrusted)
MAX_HOLD = 60.0


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

    def __init__(self, limit: float, window: float, slack: float = 0.0) -> None:
        self.limit = limit
        self.window = window
        #: seconds a charge for what the provider counted outlasts its reset (see :meth:`sync`)
        self.slack = slack
        self._lock = threading.Lock()
        self._log: deque[list[float]] = deque()  # [start time, amount]
        self._used = 0.0
        #: the charge for what the provider counted beyond this window's own log (see :meth:`sync`)
        self._charge: list[float] | None = None

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

    async def acquire(
        self, amount: float, clock: Callable[[], float] = time.monotonic
    ) -> list[float]:
        while True:
            entry, wait = self.try_acquire(amount, clock())
            if entry is not None:
                return entry
            await asyncio.sleep(wait)

    def left(self, now: float) -> float:
        """What the window may still spend at ``now``."""
        with self._lock:
            self._expire(now)
            return self.limit - self._used

    def sync(self, spent: float, reset_s: float | None, now: float) -> None:
        """Charge what the provider says was ``spent`` beyond this window's own count (another
        client of the same key, or requests sent before this window existed) until the
        provider's reset (else a whole window).

        The charge replaces the one the last reply made rather than adding to it: each reply
        states the provider's whole count, and what an earlier one saw beyond this window's log
        may since have come into it (another reply's tokens, counted by the provider before that
        reply was read here). Added up, those were counted twice until they expired, and a run
        under a tokens limit used half the rate it was allowed."""
        with self._lock:
            self._expire(now)
            old = self._charge
            if old is not None:
                self._charge = None
                for i, entry in enumerate(self._log):
                    if entry is old:
                        del self._log[i]
                        self._used -= old[1]
                        break
            unseen = spent - self._used
            if unseen < 1:
                return
            # the provider frees what it counted from its reset on, over the time it took to
            # come in: charged until its reset plus this window's margin over the provider's
            # (the whole window when it gives no reset), in its place in the log (oldest
            # first: expiry and the wait both read it in order)
            hold = self.window if reset_s is None else min(self.window, reset_s + self.slack)
            dated = now + hold - self.window
            at = next((i for i, e in enumerate(self._log) if e[0] > dated), len(self._log))
            self._charge = [dated, unseen]
            self._log.insert(at, self._charge)
            self._used += unseen

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
        clock: Callable[[], float] = time.monotonic,
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
        # a budget not pinned is counted from the first request, without a limit, until the
        # first reply says whether the provider states its own (see :meth:`observe`)
        self._requests: _Window | None = _Window(rpm, window) if rpm else _provider_window(math.inf)
        self._tokens: _Window | None = _Window(tpm, window) if tpm else _provider_window(math.inf)
        #: the windows count without a limit, waiting for the provider's numbers
        self._counting = not (rpm and tpm)
        self._clock = clock
        #: no request is sent before this time (a 429 said the budget is spent until then)
        self._hold_until = 0.0
        #: the provider's own numbers pace the requests (see the module)
        self._paced = False
        #: requests sent before this time belong to the rate limit's last cut (see
        #: :meth:`_on_rate_limited`)
        self._episode_until = 0.0
        self.holds = 0
        #: the provider's prompt tokens per token synth estimated, a moving average of the replies
        self._token_scale = 1.0

    @property
    def adaptive(self) -> bool:
        return self._control is not None

    @property
    def paced_by_provider(self) -> bool:
        """Whether the provider's rate-limit headers pace the requests."""
        return self._paced

    def observe(self, limits: RateLimits, now: float | None = None) -> None:
        """Pace to the budgets a reply's headers stated (see the module); ``now`` is the
        limiter's clock."""
        now = self._clock() if now is None else now
        for budget, pinned, name in (
            (limits.requests, self.rpm is not None, "_requests"),
            (limits.tokens, self.tpm is not None, "_tokens"),
        ):
            if budget is None:
                continue
            window: _Window | None = getattr(self, name)
            if not pinned:
                if window is None:
                    window = _provider_window(budget.limit)
                    setattr(self, name, window)
                elif window.limit != budget.limit:
                    # the same window, what it counted kept (requests in flight correct theirs)
                    window.limit = budget.limit
                self._paced = True
            if window is not None and budget.remaining is not None:
                window.sync(budget.limit - budget.remaining, budget.reset_s, now)
        self.stop_counting()

    def stop_counting(self) -> None:
        """Drop the windows still counting without a limit: a reply came without the
        provider's numbers for them (they cost a token estimate a request)."""
        if not self._counting:
            return
        self._counting = False
        if self._requests is not None and self._requests.limit == math.inf:
            self._requests = None
        if self._tokens is not None and self._tokens.limit == math.inf:
            self._tokens = None

    def scaled_estimate(self, estimated: int) -> int:
        """``estimated`` prompt tokens as the provider is likely to count them."""
        return max(1, round(estimated * self._token_scale))

    def learn_tokens(self, estimated: int, counted: int) -> None:
        """The provider counted ``counted`` prompt tokens where synth estimated ``estimated``."""
        if estimated > 0 and counted > 0:
            self._token_scale += TOKEN_SCALE_WEIGHT * (counted / estimated - self._token_scale)

    def hold(self, seconds: float, now: float | None = None) -> None:
        """Send no request for ``seconds`` (at most :data:`MAX_HOLD`) from ``now``."""
        now = self._clock() if now is None else now
        until = now + min(max(seconds, 0.0), MAX_HOLD)
        if until > self._hold_until:
            self._hold_until = until
            self.holds += 1

    def held_for(self, now: float | None = None) -> float:
        """Seconds until requests may be sent again (0: now)."""
        now = self._clock() if now is None else now
        return max(0.0, self._hold_until - now)

    async def _wait_hold(self) -> None:
        wait = self.held_for()
        if wait > 0:
            await asyncio.sleep(wait)

    def _on_rate_limited(self, exc: RateLimitError, sent_in: int, sent_at: float) -> None:
        """A 429 of a request sent at ``sent_at``: hold every request until the budget is whole
        again; cut the level only when the provider's numbers do not pace the requests, and
        once for a rate limit's whole episode (under the control lock).

        A rate limit's 429 (one that says to wait :data:`~synth.llm._aimd.RATE_WAIT` or more)
        cuts the level once and starts an episode: a request sent before that hold ends (or
        within ``RATE_WAIT`` of its end), whose 429 holds again, extends it rather than cutting
        again. The provider's window frees as it filled, a few requests at a time, so the
        requests let go when a hold ends meet 429s with short waits until it has freed: each
        a cut, they halved the level down to a few and a run used three quarters of the rate
        it was allowed. The holds pace such a run; the level is not what was too high."""
        limits: RateLimits | None = exc.rate_limits
        if limits is not None:
            self.observe(limits)
        spent = [] if limits is None else [limits.requests, limits.tokens]
        resets = [
            b.reset_s for b in spent if b is not None and b.reset_s is not None and _exhausted(b)
        ]
        # the provider's Retry-After says when one request may go again; a reset, when all may
        wait = exc.retry_after if exc.retry_after is not None else max(resets, default=None)
        in_episode = wait is not None and sent_at < self._episode_until
        if wait is not None:
            self.hold(wait)
            if in_episode or wait >= RATE_WAIT:
                self._episode_until = max(self._episode_until, self._hold_until + RATE_WAIT)
        control = self._control
        if control is None:
            return
        if in_episode or (self._paced and (resets or wait is not None)):
            control.signals[exc.kind] += 1
        else:
            self._slots.resize(control.on_congestion(exc.kind, sent_in, wait=wait))

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
            await self._wait_hold()
            if self._requests is not None:
                await self._requests.acquire(1, self._clock)
            with self.watch(label):
                yield
        finally:
            self._slots.release()

    @contextlib.contextmanager
    def watch(self, label: str | None) -> Iterator[None]:
        """Time the request made inside: its reply, a 429 or a timeout moves an adaptive level."""
        control = self._control
        if control is None:  # a fixed limiter leaves each 429 to the retry that waits it out
            yield
            return
        sent_in, started, held_back = control.epoch, self._clock(), self._slots.held_back
        half_used = 2 * self._slots.in_use >= self._slots.size  # when this request went out
        try:
            yield
        except RateLimitError as exc:
            with self._control_lock:
                self._on_rate_limited(exc, sent_in, started)
            raise
        except ModelTimeoutError as exc:
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
            level = control.on_reply(label, self._clock() - started, full=full)
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
        found["paced_by_provider"] = self._paced
        found["holds"] = self.holds
        return found

    def __repr__(self) -> str:
        adaptive = ", adaptive=True" if self.adaptive else ""
        return (
            f"RateLimiter(max_concurrent={self.max_concurrent}, rpm={self.rpm}, tpm={self.tpm}"
            f"{adaptive})"
        )


def _provider_window(limit: float) -> _Window:
    """A window for a provider's per-minute budget of ``limit`` (see :data:`HEADER_MARGIN`)."""
    return _Window(limit, LIMIT_WINDOW * (1 + HEADER_MARGIN), slack=LIMIT_WINDOW * HEADER_MARGIN)


#: characters a token, about, in English text (what a window only counting charges a request)
CHARS_PER_TOKEN = 4


def _rough_tokens(prompt: str, system: str | None) -> int:
    """About how many tokens a request's prompt and system prompt hold, from their length."""
    return max(1, (len(prompt) + len(system or "")) // CHARS_PER_TOKEN)


def _exhausted(budget: Budget) -> bool:
    """Whether a budget a 429 stated is spent (under 1% of its limit left)."""
    return budget.remaining is not None and budget.remaining < max(1.0, 0.01 * budget.limit)


class LimitedModel(WrapperModel):
    """Holds a slot of ``limiter`` (and its budgets) for each request to ``inner``."""

    def __init__(self, inner: LLM, limiter: RateLimiter, *, max_tokens: int | None = None) -> None:
        super().__init__(inner)
        self.limiter = limiter
        self.max_tokens = max_tokens

    def _estimate(self, prompt: str, system: str | None) -> int:
        """The prompt's tokens as synth counts them (before the limiter's scale)."""
        from synth.llm.pricing import estimate_tokens

        return estimate_tokens(prompt, system=system)

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
            await limiter._wait_hold()
            if limiter._requests is not None:
                await limiter._requests.acquire(1, limiter._clock)
            tokens, spent, estimated = limiter._tokens, None, 0
            if tokens is not None:
                if tokens.limit == math.inf:
                    # only counting until a reply states the provider's budget: the reply's own
                    # count replaces this and the provider's numbers true the window up, so the
                    # prompt's length stands in; counting its tokens would load the tokenizer
                    # before the first request could leave (0.2 s, all of a judge run's wait)
                    amount = _rough_tokens(prompt, system) + (self.max_tokens or 0)
                else:
                    estimated = self._estimate(prompt, system)
                    amount = limiter.scaled_estimate(estimated) + (self.max_tokens or 0)
                spent = await tokens.acquire(amount, limiter._clock)
            with limiter.watch(label):
                completion = await self.inner.arequest(
                    prompt, system=system, schema=schema, label=label
                )
            # this reply's own count first, then the provider's numbers, which include it: the
            # other way round its completion tokens would be charged twice
            if tokens is not None and spent is not None and completion.input_tokens is not None:
                tokens.adjust(spent, completion.input_tokens + (completion.output_tokens or 0))
                limiter.learn_tokens(estimated, completion.input_tokens)
            limits = completion.extra.get(RATE_LIMITS)
            if limits is not None:  # the limiter's, never stored with the reply
                extra = {k: v for k, v in completion.extra.items() if k != RATE_LIMITS}
                completion = dataclasses.replace(completion, extra=extra)
                with limiter._control_lock:
                    limiter.observe(limits)
            elif limiter._counting:
                with limiter._control_lock:
                    limiter.stop_counting()
            return completion
        finally:
            limiter._slots.release()

    def __repr__(self) -> str:
        return f"LimitedModel({self.inner!r}, {self.limiter!r})"


__all__ = ["HEADER_MARGIN", "MAX_HOLD", "LimitedModel", "RateLimiter"]
