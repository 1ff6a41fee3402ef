"""Usage counting: tokens, requests, cached responses, retries and failures, by model and by label.

One :class:`Usage` is shared by the wrappers of a model made with ``make_llm``: the outermost
:class:`UsageModel` counts calls, responses, cached responses and failures by kind; the innermost
:class:`MeterModel` counts every request sent and the tokens of every reply received (also replies
that were then refused and asked again, because they cost the same); the retry wrapper counts
retries by kind. A label is whatever the caller passes (the pipeline passes its stage name).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import threading
import time
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import BaseModel

from synth.errors import CacheError, ModelError
from synth.llm.base import LLM, REQUESTS_SENT, Completion
from synth.llm.spec import model_key
from synth.llm.wrapper import WrapperModel

UNLABELLED = "unlabelled"
#: the labels of a remote embedder's requests start with this; the rest is the caller's (a stage)
EMBEDDINGS_LABEL = "embeddings:"


@dataclass
class UsageCounts:
    """What calls to a model (or several) used."""

    calls: int = 0  # calls made through the model
    responses: int = 0  # calls answered, by the provider or the cache
    cached_responses: int = 0  # calls answered from the cache (they cost nothing)
    requests: int = 0  # requests sent to the provider, every attempt included
    # of requests: abandoned before their reply came back (the run no longer needed them); one
    # cancelled at once may never have reached the provider, which synth cannot tell
    cancelled: int = 0
    input_tokens: int = 0  # of every reply received from the provider (never of cached ones)
    output_tokens: int = 0
    # of input_tokens: served from the provider's prompt cache (cheaper), written to it (Anthropic)
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    retries: dict[str, int] = field(default_factory=dict)  # by kind: rate_limit, server, ...
    failures: dict[str, int] = field(default_factory=dict)  # calls that raised, by error kind

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def total_retries(self) -> int:
        return sum(self.retries.values())

    @property
    def total_failures(self) -> int:
        return sum(self.failures.values())

    def add(self, other: UsageCounts) -> UsageCounts:
        """Add ``other``'s counts into these, in place; returns self."""
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, dict):
                for kind, n in theirs.items():
                    mine[kind] = mine.get(kind, 0) + n
            else:
                setattr(self, f.name, mine + theirs)
        return self

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["retries"] = dict(sorted(self.retries.items()))
        out["failures"] = dict(sorted(self.failures.items()))
        return out


@dataclass
class LabelTimes:
    """When a label's requests left and their replies came back (``time.time()``), and the
    seconds the replies took in all."""

    first_sent: float = math.inf
    last_sent: float = -math.inf
    first_back: float = math.inf
    last_back: float = -math.inf
    replies: int = 0
    seconds: float = 0.0

    def add(self, other: LabelTimes) -> LabelTimes:
        """Fold ``other`` into these, in place; returns self."""
        self.first_sent = min(self.first_sent, other.first_sent)
        self.last_sent = max(self.last_sent, other.last_sent)
        self.first_back = min(self.first_back, other.first_back)
        self.last_back = max(self.last_back, other.last_back)
        self.replies += other.replies
        self.seconds += other.seconds
        return self


class Timeline:
    """Thread-safe :class:`LabelTimes` per label: what a run's manifest draws its timeline from."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._times: dict[str, LabelTimes] = {}

    def sent(self, label: str | None, at: float) -> None:
        with self._lock:
            times = self._times.setdefault(label or UNLABELLED, LabelTimes())
            times.first_sent = min(times.first_sent, at)
            times.last_sent = max(times.last_sent, at)

    def back(self, label: str | None, sent_at: float, at: float) -> None:
        """A reply to a request sent at ``sent_at`` came back at ``at``."""
        with self._lock:
            times = self._times.setdefault(label or UNLABELLED, LabelTimes())
            times.first_back = min(times.first_back, at)
            times.last_back = max(times.last_back, at)
            times.replies += 1
            times.seconds += at - sent_at

    def by_label(self) -> dict[str, LabelTimes]:
        """A copy of the times per label."""
        with self._lock:
            return {label: LabelTimes().add(t) for label, t in self._times.items()}

    def merge(self, other: Timeline) -> None:
        for label, times in other.by_label().items():
            with self._lock:
                self._times.setdefault(label, LabelTimes()).add(times)


class Usage:
    """Thread-safe usage counters, kept per (model, label); read them by model, by label or in total.
    ``timeline`` holds when each label's requests left and came back."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], UsageCounts] = {}
        self.timeline = Timeline()

    def record(
        self,
        model: str,
        label: str | None = None,
        *,
        calls: int = 0,
        responses: int = 0,
        cached_responses: int = 0,
        requests: int = 0,
        cancelled: int = 0,
        input_tokens: int | None = 0,
        output_tokens: int | None = 0,
        cached_input_tokens: int | None = 0,
        cache_write_tokens: int | None = 0,
        retry: str | None = None,
        failure: str | None = None,
    ) -> None:
        """Add one event's counts."""
        key = (model, label or UNLABELLED)
        with self._lock:
            counts = self._counts.setdefault(key, UsageCounts())
            counts.calls += calls
            counts.responses += responses
            counts.cached_responses += cached_responses
            counts.requests += requests
            counts.cancelled += cancelled
            counts.input_tokens += input_tokens or 0
            counts.output_tokens += output_tokens or 0
            counts.cached_input_tokens += cached_input_tokens or 0
            counts.cache_write_tokens += cache_write_tokens or 0
            if retry:
                counts.retries[retry] = counts.retries.get(retry, 0) + 1
            if failure:
                counts.failures[failure] = counts.failures.get(failure, 0) + 1

    def counts(self, model: str | None = None, label: str | None = None) -> UsageCounts:
        """The sum over every (model, label) matching the given ones (``None`` matches all)."""
        total = UsageCounts()
        with self._lock:
            for (m, lab), counts in self._counts.items():
                if (model is None or m == model) and (label is None or lab == label):
                    total.add(counts)
        return total

    @property
    def total(self) -> UsageCounts:
        return self.counts()

    def pairs(self) -> dict[tuple[str, str], UsageCounts]:
        """A copy of the counts per ``(model, label)``."""
        with self._lock:
            return {key: UsageCounts().add(c) for key, c in self._counts.items()}

    def by_model(self) -> dict[str, UsageCounts]:
        out: dict[str, UsageCounts] = {}
        for (model, _), counts in self.pairs().items():
            out.setdefault(model, UsageCounts()).add(counts)
        return dict(sorted(out.items()))

    def by_label(self) -> dict[str, UsageCounts]:
        out: dict[str, UsageCounts] = {}
        for (_, label), counts in self.pairs().items():
            out.setdefault(label, UsageCounts()).add(counts)
        return dict(sorted(out.items()))

    def merge(self, other: Usage) -> Usage:
        """Add ``other``'s counts into this one, in place; returns self."""
        for (model, label), counts in other.pairs().items():
            with self._lock:
                self._counts.setdefault((model, label), UsageCounts()).add(counts)
        self.timeline.merge(other.timeline)
        return self

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
        self.timeline = Timeline()

    def to_dict(self) -> dict[str, Any]:
        """``{"total": ..., "by_model": {...}, "by_label": {...}}``, ready for JSON."""
        return {
            "total": self.total.to_dict(),
            "by_model": {k: v.to_dict() for k, v in self.by_model().items()},
            "by_label": {k: v.to_dict() for k, v in self.by_label().items()},
        }

    def cost(self, prices: Any = None) -> Any:
        """The estimated cost of this usage (see :func:`synth.llm.pricing.estimate_cost`)."""
        from synth.llm.pricing import estimate_cost

        return estimate_cost(self, prices)

    def __repr__(self) -> str:
        t = self.total
        return (
            f"Usage(calls={t.calls}, responses={t.responses}, cached={t.cached_responses}, "
            f"requests={t.requests}, tokens={t.input_tokens}+{t.output_tokens}, "
            f"retries={t.total_retries}, failures={t.total_failures})"
        )


class UsageModel(WrapperModel):
    """Counts calls, responses, cached responses and failures by kind into :attr:`usage`."""

    def __init__(self, inner: LLM, usage: Usage | None = None) -> None:
        super().__init__(inner)
        self.usage = usage if usage is not None else Usage()

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        key = model_key(self)
        self.usage.record(key, label, calls=1)
        try:
            completion = await self.inner.arequest(
                prompt, system=system, schema=schema, label=label
            )
        except ModelError as exc:
            self.usage.record(key, label, failure=exc.kind)
            raise
        except CacheError:
            self.usage.record(key, label, failure="cache")
            raise
        self.usage.record(key, label, responses=1, cached_responses=int(completion.cached))
        return completion


class MeterModel(WrapperModel):
    """Counts every request sent to ``inner`` and the tokens of every reply it returns."""

    def __init__(self, inner: LLM, usage: Usage) -> None:
        super().__init__(inner)
        self.usage = usage

    async def arequest(
        self,
        prompt: str,
        *,
        system: str | None = None,
        schema: type[BaseModel] | None = None,
        label: str | None = None,
    ) -> Completion:
        key = model_key(self)
        self.usage.record(key, label, requests=1)
        sent_at = time.time()
        self.usage.timeline.sent(label, sent_at)
        try:
            completion = await self.inner.arequest(
                prompt, system=system, schema=schema, label=label
            )
        except asyncio.CancelledError:
            self.usage.record(key, label, cancelled=1)
            raise
        self.usage.timeline.back(label, sent_at, time.time())
        sent = completion.extra.get(REQUESTS_SENT, 1)
        self.usage.record(
            key,
            label,
            requests=sent - 1,
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            cached_input_tokens=completion.cached_input_tokens,
            cache_write_tokens=completion.cache_write_tokens,
        )
        if sent != 1:  # counted here; not stored with the reply, where a cache would keep it
            extra = {k: v for k, v in completion.extra.items() if k != REQUESTS_SENT}
            completion = dataclasses.replace(completion, extra=extra)
        return completion


__all__ = [
    "EMBEDDINGS_LABEL",
    "UNLABELLED",
    "LabelTimes",
    "MeterModel",
    "Timeline",
    "Usage",
    "UsageCounts",
    "UsageModel",
]
