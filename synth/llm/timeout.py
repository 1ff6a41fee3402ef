"""Every call has a deadline, so a hung connection cannot stall a run; a silent server stops it.

A server that accepts connections and never answers (a proxy or firewall that drops the traffic)
would otherwise cost every request its whole timeout times its retries, stage after stage. The
:class:`SilenceBreaker` shared by a run's models turns that into one :class:`EndpointError`:

- before the server has replied at all, the first request that gets no reply of any kind within
  its timeout stops the run (the server had a whole timeout to say anything, and said nothing);
- after it has replied, :data:`TIMEOUTS_IN_A_ROW` timeouts with no reply of any kind between them
  stop the run; each one before that is said ("waiting on the server") while it is retried.

A reply of any kind (an answer, a 429, a 5xx, a refusal) counts as a reply; a dropped connection
counts as neither.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from pydantic import BaseModel

from synth.errors import (
    ConfigError,
    EndpointError,
    ModelConnectionError,
    ModelError,
    ModelTimeoutError,
)
from synth.llm.base import LLM, Completion
from synth.llm.wrapper import WrapperModel

#: timeouts with no reply of any kind between them that stop a run whose server had answered
TIMEOUTS_IN_A_ROW = 3


class SilenceBreaker:
    """Counts timeouts in a row with no reply from the server; trips into one EndpointError.

    Shared by every model of a run (thread-safe). ``notify`` gets the "waiting on the server" line
    said at each timeout that does not trip it (a run binds it to its progress display).
    """

    def __init__(self, in_a_row: int = TIMEOUTS_IN_A_ROW) -> None:
        if in_a_row < 1:
            raise ConfigError(f"in_a_row must be at least 1, got {in_a_row}")
        self.in_a_row = in_a_row
        self.heard = False
        self.timeouts = 0
        self.error: EndpointError | None = None
        self.notify: Callable[[str], None] = lambda text: None
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise the breaker's error when it has tripped (before a request is sent)."""
        if self.error is not None:
            raise self.error

    def replied(self) -> None:
        """The server replied (anything at all): the silence, if any, is over."""
        self.heard = True
        self.timeouts = 0

    def timed_out(self, where: str | None, timeout: float) -> EndpointError | None:
        """Count a request that got no reply within ``timeout`` seconds from the server at
        ``where``; the :class:`EndpointError` to raise instead when the server is silent."""
        server = f"the model server at {where}" if where else "the model server"
        with self._lock:
            self.timeouts += 1
            needed = self.in_a_row if self.heard else 1
            if self.error is None and self.timeouts >= needed:
                row = (
                    f"{self.timeouts} requests in a row got"
                    if self.heard
                    else "it has sent no reply at all: the first request got"
                )
                self.error = EndpointError(
                    f"{server} is silent ({row} no reply of any kind within {timeout:g} s); "
                    "check that it is up and reachable (a proxy or firewall may be dropping the "
                    "traffic), or pass a longer --timeout",
                    base_url=where,
                )
            if self.error is not None:
                return self.error
            count = self.timeouts
        self.notify(
            f"waiting on the server: {server} sent no reply within {timeout:g} s "
            f"({count} in a row; retrying, the run stops after {self.in_a_row})"
        )
        return None


class TimeoutModel(WrapperModel):
    """Raises :class:`ModelTimeoutError` when ``inner`` has not answered within ``timeout``
    seconds, or, with a ``breaker`` (a run's models share one), its :class:`EndpointError` when
    the server has gone silent."""

    def __init__(self, inner: LLM, timeout: float, breaker: SilenceBreaker | None = None) -> None:
        super().__init__(inner)
        if not timeout or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = float(timeout)
        self.breaker = breaker  # none: every timeout is the item's own (retried as such)

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        breaker = self.breaker
        if breaker is not None:
            breaker.check()
        try:
            async with asyncio.timeout(
                self.timeout
            ):  # no extra task per request, as wait_for makes
                completion = await self.inner.arequest(
                    prompt, system=system, schema=schema, label=label
                )
        except (TimeoutError, ModelTimeoutError) as exc:  # ours, or the SDK's own deadline
            where = self.identity().get("base_url")
            silent = breaker.timed_out(where, self.timeout) if breaker is not None else None
            if silent is not None:
                raise silent from None
            if isinstance(exc, ModelTimeoutError):
                raise
            raise ModelTimeoutError(
                f"{self.provider}:{self.model} did not answer within {self.timeout:g} s"
            ) from None
        except (ModelConnectionError, EndpointError):
            raise  # no reply, but no silence either: a dropped connection is retried as such
        except ModelError:
            if breaker is not None:
                breaker.replied()  # a 429, a 5xx, a refusal: the server is there
            raise
        if breaker is not None:
            breaker.replied()
        return completion

    def __repr__(self) -> str:
        return f"TimeoutModel({self.inner!r}, timeout={self.timeout:g})"


__all__ = ["TIMEOUTS_IN_A_ROW", "SilenceBreaker", "TimeoutModel"]
