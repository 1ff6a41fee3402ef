"""The model layer: one call for every provider, with retries, cache, rate limits, usage and cost.

``make_llm`` (``factory``) builds a model; ``spec`` reads ``provider:model`` and says how a model
is recorded; ``base`` holds the interface; one adapter module per provider (``openai``,
``anthropic``, ``gemini``, imported only when used); one wrapper module per cross-cutting
behaviour (``retry``, ``cache``, ``limiter``, ``timeout``, ``usage``); ``pricing`` turns usage
into an estimated cost.
"""

from synth.llm.base import LLM, Completion, FunctionModel, run_sync
from synth.llm.cache import CacheModel, cache_key
from synth.llm.factory import make_llm, wrap_llm
from synth.llm.limiter import LimitedModel, RateLimiter
from synth.llm.pricing import (
    PRICES,
    PRICES_AS_OF,
    CostEstimate,
    Price,
    estimate_cost,
    estimate_tokens,
)
from synth.llm.retry import RetryConfig, RetryModel
from synth.llm.spec import PROVIDERS, model_identity, model_key, parse_model_spec
from synth.llm.sqlite_cache import SQLiteCache
from synth.llm.structured import parse_verdict
from synth.llm.timeout import TimeoutModel
from synth.llm.usage import MeterModel, Usage, UsageCounts, UsageModel
from synth.llm.wrapper import WrapperModel

__all__ = [
    "LLM",
    "PRICES",
    "PRICES_AS_OF",
    "PROVIDERS",
    "CacheModel",
    "Completion",
    "CostEstimate",
    "FunctionModel",
    "LimitedModel",
    "MeterModel",
    "Price",
    "RateLimiter",
    "RetryConfig",
    "RetryModel",
    "SQLiteCache",
    "TimeoutModel",
    "Usage",
    "UsageCounts",
    "UsageModel",
    "WrapperModel",
    "cache_key",
    "estimate_cost",
    "estimate_tokens",
    "make_llm",
    "model_identity",
    "model_key",
    "parse_model_spec",
    "parse_verdict",
    "run_sync",
    "wrap_llm",
]
