"""The provider's own rate-limit numbers, read from a reply's headers.

OpenAI sends ``x-ratelimit-limit-requests``, ``x-ratelimit-remaining-requests`` and
``x-ratelimit-reset-requests`` (a duration: ``1s``, ``6m0s``, ``20ms``), and the same for
``-tokens``, with every reply, a 429 included; Anthropic sends
``anthropic-ratelimit-requests-limit``, ``-remaining`` and ``-reset`` (an RFC 3339 time), and the
same for ``tokens`` (and for ``input-tokens`` and ``output-tokens``, of which the input one is read
when there is no plain ``tokens`` one). Both state their limits per minute. :func:`read_rate_limits`
turns either into one :class:`RateLimits`, which the limiter paces to
(:meth:`synth.llm.limiter.RateLimiter.observe`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synth.llm.base import Completion

#: the window both providers state their limits over, seconds
LIMIT_WINDOW = 60.0
#: key of ``Completion.extra`` under which an adapter hands a reply's limits to the limiter
RATE_LIMITS = "rate_limits"

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class Budget:
    """One of a provider's limits: how much per minute, how much is left, and in how many
    seconds it is whole again (None: not said)."""

    limit: float
    remaining: float | None = None
    reset_s: float | None = None


@dataclass(frozen=True)
class RateLimits:
    """The requests and tokens budgets one reply stated (None: that one was not sent)."""

    requests: Budget | None = None
    tokens: Budget | None = None


def parse_duration(value: str) -> float | None:
    """Seconds in an OpenAI reset duration (``1s``, ``6m0s``, ``1h2m3.5s``, ``20ms``), or a bare
    number of seconds; None when it is neither."""
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT[u] for n, u in parts)


def _seconds_until(value: str, now: float) -> float | None:
    """Seconds from ``now`` (``time.time()``) to an RFC 3339 time, or a duration."""
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return parse_duration(value)
    return max(0.0, moment.timestamp() - now)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number >= 0 else None


def _budget(
    headers: Mapping[str, str] | Any, names: tuple[str, str, str], now: float
) -> Budget | None:
    limit_name, remaining_name, reset_name = names
    limit = _number(headers.get(limit_name))
    if not limit:
        return None
    reset = headers.get(reset_name)
    return Budget(
        limit=limit,
        remaining=_number(headers.get(remaining_name)),
        reset_s=None if reset is None else _seconds_until(str(reset), now),
    )


def _openai(kind: str) -> tuple[str, str, str]:
    return tuple(f"x-ratelimit-{part}-{kind}" for part in ("limit", "remaining", "reset"))  # type: ignore[return-value]


def _anthropic(kind: str) -> tuple[str, str, str]:
    return tuple(f"anthropic-ratelimit-{kind}-{part}" for part in ("limit", "remaining", "reset"))  # type: ignore[return-value]


def read_rate_limits(
    headers: Mapping[str, str] | Any | None, now: float | None = None
) -> RateLimits | None:
    """The budgets a reply's ``headers`` state (OpenAI's or Anthropic's), None when none."""
    if headers is None:
        return None
    now = time.time() if now is None else now
    requests = _budget(headers, _openai("requests"), now) or _budget(
        headers, _anthropic("requests"), now
    )
    tokens = (
        _budget(headers, _openai("tokens"), now)
        or _budget(headers, _anthropic("tokens"), now)
        or _budget(headers, _anthropic("input-tokens"), now)
    )
    if requests is None and tokens is None:
        return None
    return RateLimits(requests, tokens)


def read_reply(response: Any, complete: Callable[[Any], Completion]) -> Completion:
    """The Completion ``complete`` makes of an SDK reply; a raw response (``with_raw_response``,
    which has ``parse`` and ``headers``) is parsed first and the budgets its headers state go in
    the completion's ``extra`` under :data:`RATE_LIMITS`, for the limiter."""
    limits = None
    if hasattr(response, "parse") and hasattr(response, "headers"):
        limits = read_rate_limits(response.headers)
        response = response.parse()
    completion = complete(response)
    if limits is not None:
        completion.extra[RATE_LIMITS] = limits
    return completion


__all__ = [
    "read_reply",
    "LIMIT_WINDOW",
    "RATE_LIMITS",
    "Budget",
    "RateLimits",
    "parse_duration",
    "read_rate_limits",
]
