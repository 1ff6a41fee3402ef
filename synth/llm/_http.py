"""What adapters share when they translate an HTTP failure: status to error type, Retry-After, and the
guard that stops a run on a server no retry will fix."""

from __future__ import annotations

import email.utils
import math
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from synth.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigError,
    EndpointError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    ServerError,
)
from synth.llm._rate_headers import read_rate_limits
from synth.llm._redact import redact_url


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
        return RateLimitError(
            message, retry_after=retry_after(headers), rate_limits=read_rate_limits(headers)
        )
    if status == 408:
        return ModelTimeoutError(message)
    if status is not None and (status >= 500 or status == 409):
        return ServerError(message)
    if status is not None and 400 <= status < 500:
        return BadRequestError(message, status=status)
    return ModelError(message)


#: the server the OpenAI SDK calls when no base URL is given
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


def check_base_url(base_url: str | None, where: str) -> None:
    """Raise :class:`ConfigError` when ``base_url`` is not an http(s) URL with a host.

    The SDKs take any string and only fail when a request is sent, as a connection error that
    synth would retry for a minute; ``where`` says where the value came from (the flag or the
    variable to fix).
    """
    if base_url is None:
        return
    try:
        parts = urllib.parse.urlsplit(base_url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a malformed port or bracket
        ok = False
    if ok:
        return
    hint = ""
    if base_url and "://" not in base_url:
        hint = f" (did you mean {redact_url('http://' + base_url)!r}?)"
    raise ConfigError(
        f"base URL {redact_url(base_url)!r} is not an http:// or https:// URL with a host{hint}; "
        f"check {where}"
    )


#: 400s before a server's first good answer that stop the run (one may be the item's fault, say a
#: prompt too long for the model; several with nothing answered are the server's)
REFUSALS_BEFORE_STOP = 3


class EndpointGuard:
    """Turns a server that no retry will fix into one :class:`EndpointError` that stops the run.

    Until the server has answered one request well, a refused connection (nothing listens, the
    name does not resolve) or a 404 trips the guard, and so do ``refusals`` 400s; every request to
    it after that raises at once without being sent.
    Once the server has answered well, such failures are left to the caller, one item at a time.
    Thread-safe: one guard is shared by every request to one server.
    """

    def __init__(
        self, base_url: str | None, what: str, fix: str, refusals: int = REFUSALS_BEFORE_STOP
    ) -> None:
        self.base_url = redact_url(base_url) or "the default server"
        self.what = what
        self.fix = fix
        self.refusals = refusals
        self.refused = 0
        self.answered = False
        self.error: EndpointError | None = None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise the guard's error when it has tripped (before a request is sent)."""
        if self.error is not None:
            raise self.error

    def ok(self) -> None:
        """A request was answered well: from now on failures are per item."""
        self.answered = True

    def timed_out(self, timeout: float) -> EndpointError | None:
        """A request got no reply of any kind within ``timeout`` seconds: before the server has
        answered once, the :class:`EndpointError` that stops the run (a silent server, as
        :class:`~synth.llm.timeout.SilenceBreaker` says it for models); after, None (retried)."""
        if self.answered:
            return None
        with self._lock:
            if self.error is None:
                self.error = EndpointError(
                    f"the {self.what} server at {self.base_url} is silent (it has sent no reply at "
                    f"all: the first request got no reply of any kind within {timeout:g} s); check "
                    "that it is up and reachable (a proxy or firewall may be dropping the traffic)",
                    base_url=self.base_url,
                )
            return self.error

    def failed(self, error: ModelError) -> EndpointError | None:
        """Count ``error``; the :class:`EndpointError` to raise instead when the server is hopeless."""
        status = getattr(error, "status", None)
        unreachable = getattr(error, "unreachable", False)
        if self.answered:
            return None
        needed = 1
        if unreachable:
            reason = "nothing answers there (connection refused or unknown host)"
        elif status == 404:
            reason = "it answers 404 Not Found (a wrong path or model name)"
        elif isinstance(error, BadRequestError):
            reason = f"it refuses every request as invalid (HTTP {status or 400})"
            needed = self.refusals
        else:
            return None
        with self._lock:
            self.refused += 1
            if self.error is None and self.refused >= needed:
                detail = " ".join(str(error).split())
                self.error = EndpointError(
                    f"cannot use the {self.what} server at {self.base_url}: {reason}; "
                    f"{self.fix} (last error: {detail[:300]})",
                    base_url=self.base_url,
                )
            return self.error


def unreachable(exc: BaseException) -> bool:
    """Whether an SDK's connection error means no connection was made at all (refused, unknown
    host), as opposed to one dropped midway: a ``ConnectError`` (httpx's, or the copy an SDK
    vendors), a refused connection or a failed name lookup somewhere in its chain."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if type(seen).__name__ == "ConnectError" or isinstance(
            seen, (ConnectionRefusedError, socket.gaierror)
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
