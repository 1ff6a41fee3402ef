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
from synth.llm.structured import parse_verdict
from synth.llm.usage import Usage
from synth.llm.wrapper import WrapperModel, model_key

#: errors worth waiting out
TRANSIENT = (RateLimitError, ServerError, ModelTimeoutError, ModelConnectionError)


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
            # never earlier than the server asked, plus a little spread so waiters do not stampede
            wait = max(wait, retry_after + rng.uniform(0, 0.1 * retry_after + 0.001))
        return wait


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
        config, key = self.config, model_key(self)
        retries = reasks = 0
        while True:
            try:
                completion = await self.inner.arequest(
                    prompt, system=system, schema=schema, label=label
                )
            except TRANSIENT as exc:
                retry_after = getattr(exc, "retry_after", None)
                if retries >= config.max_retries or (
                    retry_after is not None and retry_after > config.max_retry_after
                ):
                    raise
                self.usage.record(key, label, retry=exc.kind)
                await asyncio.sleep(config.delay(retries, self._rng, retry_after))
                retries += 1
                continue
            try:
                check_complete(completion)
                if schema is not None:
                    parse_verdict(completion.text, schema)
            except (IncompleteCompletionError, OutputParseError) as exc:
                if schema is None or reasks >= config.max_reasks:
                    raise
                self.usage.record(key, label, retry=exc.kind)
                reasks += 1
                continue
            return completion

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


__all__ = ["TRANSIENT", "RetryConfig", "RetryModel", "count_reask", "reask_budget"]
