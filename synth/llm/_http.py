"""What adapters share when they translate an HTTP failure: status to error type, Retry-After."""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping
from typing import Any

from synth.errors import (
    AuthenticationError,
    BadRequestError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)


def retry_after(headers: Mapping[str, str] | Any | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except (TypeError, ValueError):
            continue
        if math.isfinite(seconds) and seconds >= 0:
            return seconds
    value = headers.get("retry-after")
    if value:
        parsed = email.utils.parsedate_tz(str(value))
        if parsed is not None:
            return max(0.0, email.utils.mktime_tz(parsed) - time.time())
    return None


def error_for_status(
    status: int | None,
    message: str,
    headers: Mapping[str, str] | Any | None = None,
    code: str | None = None,
) -> ModelError:
    """The synth error for an HTTP status: 401/403 auth, 429 rate limit, 5xx server, else bad request.

    A 429 whose code says the account's quota is spent is not a rate limit (waiting will not help),
    so it is an :class:`AuthenticationError`, which is not retried.
    """
    if code == "insufficient_quota":
        return AuthenticationError(f"{message} (the account's quota is spent)")
    if status in (401, 403):
        return AuthenticationError(
            f"{message} (the API key was refused: check the provider's key variable, e.g. "
            "OPENAI_API_KEY, and the base URL)"
        )
    if status == 429:
        return RateLimitError(message, retry_after=retry_after(headers))
    if status == 408:
        return ModelTimeoutError(message)
    if status is not None and (status >= 500 or status == 409):
        return ServerError(message)
    if status is not None and 400 <= status < 500:
        return BadRequestError(message)
    return ModelError(message)
