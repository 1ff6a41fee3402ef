"""``make_llm``: one call that turns a provider name, a ``provider:model`` spec or a callable into a model.

The model it returns is the provider's adapter wrapped, inside out, by: usage metering, a timeout,
the rate limiter, retries, the cache (when given) and usage counting::

    UsageModel(CacheModel(RetryModel(LimitedModel(TimeoutModel(MeterModel(adapter))))))

so a cache hit takes no slot and is never retried, a retry waits outside the limiter, and every
attempt is timed out on its own. With ``batch`` (a :class:`~synth.llm.batch.BatchConfig`) the
requests go through the provider's Batch API instead, with no limiter or timeout (a job holds no
connection and may take a day)::

    UsageModel(CacheModel(RetryModel(MeterModel(BatchModel(adapter)))))
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from synth.errors import ConfigError
from synth.llm.base import LLM, FunctionModel
from synth.llm.batch import BatchConfig, BatchModel
from synth.llm.cache import CacheModel
from synth.llm.limiter import LimitedModel, RateLimiter
from synth.llm.retry import RetryConfig, RetryModel
from synth.llm.spec import (
    DEFAULT_MODELS,
    PROVIDERS,
    full_model_spec,
    parse_model_spec,
    provider_class,
)
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.timeout import SilenceBreaker, TimeoutModel
from synth.llm.usage import MeterModel, Usage, UsageModel

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_CONCURRENT = 16


def wrap_llm(
    llm: LLM,
    *,
    cache: MutableMapping[str, str] | str | os.PathLike[str] | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    max_retries: int | None = None,
    max_reasks: int | None = None,
    retry: RetryConfig | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    rpm: float | None = None,
    tpm: float | None = None,
    limiter: RateLimiter | None = None,
    usage: Usage | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    batch: BatchConfig | None = None,
    breaker: SilenceBreaker | None = None,
) -> UsageModel:
    """Wrap a bare model with metering, timeout, limits, retries, cache and usage (see module doc);
    ``breaker`` (shared by a run's models) stops the run on a silent server."""
    usage = usage if usage is not None else Usage()
    retry = retry or RetryConfig()
    overrides = {
        k: v for k, v in (("max_retries", max_retries), ("max_reasks", max_reasks)) if v is not None
    }
    if overrides:
        retry = retry.model_copy(update=overrides)
    if limiter is None:
        limiter = RateLimiter(max_concurrent, rpm=rpm, tpm=tpm)
    elif rpm is not None or tpm is not None:
        raise ConfigError("pass rpm/tpm to the RateLimiter you share, not next to it")
    model: LLM
    if batch is not None:
        model = MeterModel(BatchModel(llm, batch), usage)
    else:
        model = MeterModel(llm, usage)
        if timeout is not None:
            model = TimeoutModel(model, timeout, breaker)
        model = LimitedModel(model, limiter, max_tokens=max_tokens)
    model = RetryModel(model, retry, usage=usage, rng=random.Random(seed))
    if cache is not None:
        if isinstance(cache, (str, os.PathLike)):
            cache = SQLiteCache(cache)
        model = CacheModel(model, cache)
    return UsageModel(model, usage)


def make_llm(
    provider: str | LLM | Callable[..., Any],
    model: str | None = None,
    *,
    client: Any = None,
    options: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    cache: MutableMapping[str, str] | str | os.PathLike[str] | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    structured: str = "auto",
    timeout: float | None = DEFAULT_TIMEOUT,
    max_retries: int | None = None,
    max_reasks: int | None = None,
    retry: RetryConfig | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    rpm: float | None = None,
    tpm: float | None = None,
    limiter: RateLimiter | None = None,
    usage: Usage | None = None,
    seed: int | None = None,
    batch: BatchConfig | None = None,
    breaker: SilenceBreaker | None = None,
) -> LLM:
    """A model ready to call: ``make_llm("openai", "gpt-4.1-mini")``, ``make_llm("openai:gpt-4.1-mini")``,
    or ``make_llm(fn)`` for any callable ``fn(prompt, system) -> str``. The provider's SDK is
    imported here, never when ``synth`` is; with no ``client`` its default client reads the API
    key from the environment. ``options`` are sent as given, nothing else is added; ``max_tokens``
    is mapped per provider. ``cache`` is a mutable mapping or a path for a :class:`SQLiteCache`.
    Its usage is in ``.usage`` (``usage=`` shares one); ``batch``: the provider's Batch API. A
    model made by ``make_llm`` is returned unchanged; another :class:`LLM` is wrapped."""
    wrapping: dict[str, Any] = dict(
        cache=cache,
        timeout=timeout,
        max_retries=max_retries,
        max_reasks=max_reasks,
        retry=retry,
        max_concurrent=max_concurrent,
        rpm=rpm,
        tpm=tpm,
        limiter=limiter,
        usage=usage,
        max_tokens=max_tokens,
        seed=seed,
        batch=batch,
        breaker=breaker,
    )
    if not isinstance(provider, str):
        return _reuse_or_wrap(provider, model, client, options, wrapping)
    adapter = _adapter(
        provider,
        model,
        client=client,
        options=options,
        max_tokens=max_tokens,
        base_url=base_url,
        api_key=api_key,
        timeout=timeout,
        structured=structured,
        max_workers=max(max_concurrent, limiter.max_concurrent if limiter else 0),
    )
    return wrap_llm(adapter, **wrapping)


def _reuse_or_wrap(
    given: Any,
    model: str | None,
    client: Any,
    options: Mapping[str, Any] | None,
    wrapping: dict[str, Any],
) -> LLM:
    """A model made by ``make_llm`` as is; another LLM or a callable wrapped with ``wrapping``."""
    if isinstance(given, UsageModel):
        fixed = ("cache", "limiter", "usage", "rpm", "tpm", "retry", "batch", "breaker")
        passed = [k for k in fixed if wrapping[k] is not None]
        if model is not None or client is not None or options or passed:
            raise ConfigError(
                f"{given!r} is already a made model; its settings are fixed (got {', '.join(passed) or 'model/client/options'})"
            )
        return given
    if isinstance(given, LLM):
        if model is not None or client is not None or options:
            raise ConfigError("model, client and options are for a provider name, not an LLM")
        return wrap_llm(given, **wrapping)
    if callable(given):
        if model is not None or client is not None or options:
            raise ConfigError("model, client and options are for a provider name, not a callable")
        return wrap_llm(FunctionModel(given), **wrapping)
    raise ConfigError(
        f"a model is a provider name, a 'provider:model' spec, an LLM or a callable; got {type(given).__name__}"
    )


def _adapter(provider: str, model: str | None, **settings: Any) -> LLM:
    """The provider's adapter for the model ``provider`` (a name or a spec) and ``model`` name."""
    name, spec_model = parse_model_spec(provider)
    if spec_model is None and model is None and name not in PROVIDERS:
        name, spec_model = parse_model_spec(full_model_spec(provider))  # a bare model name
    if spec_model is not None and model is not None and spec_model != model:
        raise ConfigError(
            f"the spec {provider!r} names model {spec_model!r}, and model={model!r} another"
        )
    model = model or spec_model or DEFAULT_MODELS.get(name)
    cls = provider_class(name)
    if not model:
        raise ConfigError(f"the {name} provider needs a model name: '{name}:<model>'")
    return cls(model, **settings)  # type: ignore[call-arg]


__all__ = ["PROVIDERS", "make_llm", "parse_model_spec", "provider_class", "wrap_llm"]
