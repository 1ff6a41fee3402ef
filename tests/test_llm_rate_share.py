"""How much of a provider's rate limit a run's limiter uses, in simulated time.

A simulated provider (:class:`SimulatedProvider`) keeps a requests- or tokens-per-minute budget
over a sliding minute, as tests/fake_openai.py does: a request's prompt tokens counted when it
arrives, its reply's once answered, a 429 at once when the budget is spent, with OpenAI's
``x-ratelimit-*`` headers or without. Requests go through the whole stack a run builds
(``wrap_llm``: limiter, retries) on an event loop whose clock is simulated (:class:`VirtualLoop`):
a wait of a minute takes no time, and the same seed gives the same run, so what the limiter lets
through in each window is counted, never timed. The real ``openai`` SDK against the fake server
is in tests/test_llm_rate_headers.py; bench/ratelimit.py measures the same cases in real time.
"""

from __future__ import annotations

import asyncio
import math
import random
import selectors
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import BaseModel

from synth.errors import RateLimitError
from synth.llm._rate_headers import RATE_LIMITS, read_rate_limits
from synth.llm.base import LLM, Completion
from synth.llm.factory import wrap_llm
from synth.llm.limiter import RateLimiter
from synth.run.models import ADAPTIVE_CEILING, RUN_START

MINUTE = 60.0
LIMIT_RPM = 300
PROMPT_WORDS = 120
REPLY_TOKENS = 20
#: tokens a minute that about LIMIT_RPM of these requests spend (prompt and reply)
LIMIT_TPM = LIMIT_RPM * (PROMPT_WORDS + 4 + REPLY_TOKENS)


class _VirtualSelector(selectors.SelectSelector):
    """Never blocks: a wait for the next timer moves the loop's clock there instead."""

    def __init__(self, loop: VirtualLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[Any]:
        ready = super().select(0)
        if not ready and timeout is not None and timeout > 0:
            self._loop.now += timeout
        return ready


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock moves only to its next timer: ``asyncio.sleep(60)`` is instant."""

    def __init__(self) -> None:
        self.now = 0.0
        super().__init__(_VirtualSelector(self))

    def time(self) -> float:
        return self.now


def _clock() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class SimulatedProvider(LLM):
    """A hosted model under a sliding-minute budget of ``rpm`` requests or ``tpm`` tokens."""

    rpm: int | None = None
    tpm: int | None = None
    headers: bool = True
    latency: tuple[float, float] = (0.9, 2.1)
    #: seconds before a 429 (a hosted provider refuses at once; tests/fake_openai.py after the
    #: latency)
    refusal_latency: float = 0.0
    #: the most seconds a request takes to reach the provider, and its reply to be read (a
    #: loaded client, a network): the provider counts what the client has not read yet
    transit: float = 0.0
    seed: int = 0
    provider: str = "simulated"
    model: str = "m"
    answered: list[tuple[float, float]] = field(default_factory=list)  # (arrived, answered)
    refused: int = 0
    _requests: deque[float] = field(default_factory=deque)
    _tokens: deque[list[float]] = field(default_factory=deque)  # [arrived, tokens]

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def _expire(self, now: float) -> None:
        while self._requests and now - self._requests[0] >= MINUTE:
            self._requests.popleft()
        while self._tokens and now - self._tokens[0][0] >= MINUTE:
            self._tokens.popleft()

    def _headers(self, now: float) -> dict[str, str]:
        """OpenAI's rate-limit headers as the budgets stand at ``now``."""
        out: dict[str, str] = {}
        if not self.headers:
            return out
        for kind, limit, used, first in (
            ("requests", self.rpm, len(self._requests), self._requests[0] if self._requests else None),
            ("tokens", self.tpm, sum(n for _, n in self._tokens), self._tokens[0][0] if self._tokens else None),
        ):  # fmt: skip
            if limit is not None:
                reset = 0.0 if first is None else first + MINUTE - now
                out[f"x-ratelimit-limit-{kind}"] = str(limit)
                out[f"x-ratelimit-remaining-{kind}"] = str(max(0, limit - used))
                out[f"x-ratelimit-reset-{kind}"] = f"{reset:.3f}s"
        return out

    def _refuse(self, now: float, wait: float) -> RateLimitError:
        self.refused += 1
        limits = read_rate_limits(self._headers(now)) if self.headers else None
        return RateLimitError("rate limit reached", retry_after=wait, rate_limits=limits)

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        if self.transit:
            await asyncio.sleep(self._rng.uniform(0, self.transit))
        now = _clock()
        self._expire(now)
        prompt_tokens = len(prompt.split()) + 4
        wait = None
        if self.rpm is not None and len(self._requests) >= self.rpm:
            wait = self._requests[0] + MINUTE - now
        elif self.tpm is not None and self._tokens:
            if sum(n for _, n in self._tokens) + prompt_tokens > self.tpm:
                wait = self._tokens[0][0] + MINUTE - now
        if wait is not None:
            if self.refusal_latency:
                await asyncio.sleep(self.refusal_latency)
                wait -= self.refusal_latency
            refused = self._refuse(_clock(), max(0.0, wait))
            if self.transit:
                await asyncio.sleep(self._rng.uniform(0, self.transit))
            raise refused
        self._requests.append(now)
        spent = [now, float(prompt_tokens)]
        self._tokens.append(spent)
        await asyncio.sleep(self._rng.uniform(*self.latency))
        spent[1] += REPLY_TOKENS
        done = _clock()
        self._expire(done)
        self.answered.append((now, done))
        extra: dict[str, Any] = {}
        limits = read_rate_limits(self._headers(done))
        if limits is not None:
            extra[RATE_LIMITS] = limits
        if self.transit:
            await asyncio.sleep(self._rng.uniform(0, self.transit))
        return Completion(
            text="ok", model=self.model, input_tokens=prompt_tokens,
            output_tokens=REPLY_TOKENS, extra=extra,
        )  # fmt: skip


def prompt(i: int) -> str:
    return f"question {i} " + " ".join(f"w{(i * 7 + k) % 997}" for k in range(PROMPT_WORDS - 2))


def run_limited(provider: SimulatedProvider, requests: int) -> RateLimiter:
    """Send ``requests`` requests at once through a run's limiter and retries, in simulated time."""
    limiter = RateLimiter(ADAPTIVE_CEILING, adaptive=True, start=RUN_START, clock=_clock)
    llm = wrap_llm(provider, limiter=limiter, timeout=None, max_retries=50, seed=0)

    async def main() -> None:
        await asyncio.gather(*[llm.acomplete(prompt(i)) for i in range(requests)])

    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        runner.run(main())
    return limiter


def share_of_allowed_rate(provider: SimulatedProvider, requests: int) -> float:
    """The least time the budget allows ``requests`` requests (a minute each ``LIMIT_RPM`` of
    them, which the tokens budget also holds, plus one answer) over the time they took."""
    floor = (math.ceil(requests / LIMIT_RPM) - 1) * MINUTE + sum(provider.latency) / 2
    return floor / max(done for _, done in provider.answered)


CASES = {
    "requests, headers": dict(rpm=LIMIT_RPM, headers=True),
    "requests, no headers": dict(rpm=LIMIT_RPM, headers=False),
    "tokens, headers": dict(tpm=LIMIT_TPM, headers=True),
    "tokens, no headers": dict(tpm=LIMIT_TPM, headers=False),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_run_uses_nine_tenths_of_the_allowed_rate(case: str) -> None:
    # 600 requests at once, twice what the budget allows in a minute: the floor is a minute
    # and one answer. With the provider's numbers the limiter paces to them and is hardly ever
    # refused (a request's tokens are estimated before it goes); without, the 429s pace it (a
    # 429 at once, as a hosted provider answers). Requests and replies take up to 0.3 s on the
    # way, so the provider counts some the limiter has not heard back about, and the other way
    provider = SimulatedProvider(**CASES[case], transit=0.3)  # type: ignore[arg-type]
    run_limited(provider, 600)
    assert len(provider.answered) == 600
    assert share_of_allowed_rate(provider, 600) >= 0.9
    if provider.headers:
        assert provider.refused <= 6


def tokens_counted(limiter: RateLimiter, now: float) -> float:
    """The tokens the limiter's window holds as spent at ``now``."""
    window = limiter._tokens
    assert window is not None
    return window.limit - window.left(now)


def test_the_tokens_window_holds_what_the_provider_counted_once() -> None:
    # a first wave sent before any reply stated the budget, then one request paced by it: the
    # provider's count holds every request once, and so must the limiter's window
    provider = SimulatedProvider(tpm=LIMIT_TPM, headers=True)
    limiter = RateLimiter(ADAPTIVE_CEILING, adaptive=True, start=RUN_START, clock=_clock)
    llm = wrap_llm(provider, limiter=limiter, timeout=None, seed=0)
    counted: list[float] = []

    async def main() -> None:
        await asyncio.gather(*[llm.acomplete(prompt(i)) for i in range(RUN_START)])
        counted.append(tokens_counted(limiter, _clock()))
        await llm.acomplete(prompt(RUN_START))
        counted.append(tokens_counted(limiter, _clock()))

    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        runner.run(main())
    per_request = PROMPT_WORDS + 4 + REPLY_TOKENS
    assert counted == [RUN_START * per_request, (RUN_START + 1) * per_request]
    assert provider.refused == 0
