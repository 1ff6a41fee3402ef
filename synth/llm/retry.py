"""Retries: transient failures are waited out, malformed structured replies are asked again.

Rate limits (429), server errors (5xx), timeouts and dropped connections are retried with
exponential backoff and jitter, waiting at least as long as the server's ``Retry-After`` says.
With a schema, a reply that was cut off, filtered, or does not parse into the schema is asked again
(a bounded number of times, without waiting). Authentication and bad-request errors are raised at
once. Every retry is counted by kind in the shared :class:`~synth.llm.usage.Usage`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

from pydantic import BaseModel, Field

from synth.errors import (
    IncompleteCompletionError,
    ModelConnectionError,
    ModelTimeoutError,
    OutputParseError,
    RateLimitError,
    ServerError,
)
from synth.llm.base import LLM, Completion, check_complete
from synth.llm.spec import model_key
from synth.llm.structured import parse_verdict
from synth.llm.usage import Usage
from synth.llm.wrapper import WrapperModel

T = TypeVar("T")

#: errors worth waiting out
TRANSIENT = (RateLimitError, ServerError, ModelTimeoutError, ModelConnectionError)
#: the most seconds a retry waits past a Retry-After (its spread; see :meth:`RetryConfig.delay`)
MAX_SPREAD = 1.0


class RetryConfig(BaseModel):
    """How hard to try before a call becomes an error."""

    model_config = {"extra": "forbid", "frozen": True}

    max_retries: int = Field(
        default=6, ge=0, description="retries of 429, 5xx, timeouts, connection errors"
    )
    max_reasks: int = Field(
        default=2, ge=0, description="re-asks of a malformed or cut-off structured reply"
    )
    initial_delay: float = Field(default=0.5, ge=0, description="seconds before the first retry")
    multiplier: float = Field(default=2.0, ge=1)
    max_delay: float = Field(default=30.0, ge=0, description="cap of the backoff delay")
    jitter: float = Field(
        default=0.5, ge=0, le=1, description="fraction of each delay drawn at random"
    )
    max_retry_after: float = Field(
        default=120.0, ge=0, description="longest Retry-After honoured; a longer one raises at once"
    )

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        base = min(self.max_delay, self.initial_delay * self.multiplier**retry)
        wait = base * (1 - self.jitter) + rng.uniform(0, base * self.jitter)
        if retry_after is not None:
            # never earlier than the server asked, plus a little spread so waiters do not
            # stampede: a tenth, up to a second (a minute's window frees as it filled, and ten
            # percent of its Retry-After held some retries six seconds past the time it freed)
            spread = min(0.1 * retry_after, MAX_SPREAD)
            wait = max(wait, retry_after + rng.uniform(0, spread + 0.001))
        return wait


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    config: RetryConfig,
    rng: random.Random,
    *,
    on_retry: Callable[[str], None],
    check: Callable[[T], None] | None = None,
    reask: bool = True,
) -> T:
    """``await attempt()`` until it succeeds, per ``config``: the one retry loop of synth.

    A transient error (:data:`TRANSIENT`) is waited out (backoff, at least its ``Retry-After``) up
    to ``max_retries`` times; a result that ``check`` refuses with :class:`OutputParseError` or
    :class:`IncompleteCompletionError` (a malformed or cut-off reply, or an attempt that raised
    one) is asked again at once, up to ``max_reasks`` times when ``reask``. ``on_retry`` gets the
    kind of each retry (``rate_limit``, ``server``, ``timeout``, ``connection``, ``incomplete``,
    ``invalid_output``). Chat models (:class:`RetryModel`) and remote embedders both use it.
    """
    retries = reasks = 0
    while True:
        try:
            result = await attempt()
            if check is not None:
                check(result)
        except TRANSIENT as exc:
            retry_after = getattr(exc, "retry_after", None)
            if retries >= config.max_retries or (
                retry_after is not None and retry_after > config.max_retry_after
            ):
                raise
            on_retry(exc.kind)
            await asyncio.sleep(config.delay(retries, rng, retry_after))
            retries += 1
            continue
        except (IncompleteCompletionError, OutputParseError) as exc:
            if not reask or reasks >= config.max_reasks:
                raise
            on_retry(exc.kind)
            reasks += 1
            continue
        return result


class RetryModel(WrapperModel):
    """Retries ``inner`` per :class:`RetryConfig`; counts retries into ``usage``."""

    def __init__(
        self,
        inner: LLM,
        config: RetryConfig | None = None,
        *,
        usage: Usage | None = None,
        rng: random.Random | None = None,
    ) -> None:
        super().__init__(inner)
        self.config = config or RetryConfig()
        self.usage = usage if usage is not None else Usage()
        self._rng = rng or random.Random(0)

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        key = model_key(self)

        def check(completion: Completion) -> None:
            check_complete(completion)
            if schema is not None:
                parse_verdict(completion.text, schema)

        return await with_retries(
            lambda: self.inner.arequest(prompt, system=system, schema=schema, label=label),
            self.config,
            self._rng,
            on_retry=lambda kind: self.usage.record(key, label, retry=kind),
            check=check,
            reask=schema is not None,
        )

    def __repr__(self) -> str:
        return f"RetryModel({self.inner!r}, max_retries={self.config.max_retries}, max_reasks={self.config.max_reasks})"


def reask_budget(llm: LLM) -> int:
    """``max_reasks`` of the retry layer in ``llm``'s chain (the default when it has none)."""
    retry = llm.layer(RetryModel) if isinstance(llm, WrapperModel) else None
    return (retry.config if retry is not None else RetryConfig()).max_reasks


def count_reask(llm: LLM, label: str | None, kind: str) -> None:
    """Count a re-ask that the caller decided on (after checking a parsed reply) as a retry of
    ``kind`` in the usage of ``llm``'s retry layer (nothing when the chain has none)."""
    retry = llm.layer(RetryModel) if isinstance(llm, WrapperModel) else None
    if retry is not None:
        retry.usage.record(model_key(retry), label, retry=kind)


__all__ = ["TRANSIENT", "RetryConfig", "RetryModel", "count_reask", "reask_budget", "with_retries"]
