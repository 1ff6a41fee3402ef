"""What calls cost: a small dated price table, cost estimates from usage, and token estimates.

Prices are list prices in US dollars per million tokens (input, output) for common models, as of
:data:`PRICES_AS_OF`; they change, so pass your own (``estimate_cost(usage, prices={...})``) when it
matters. A model is found by its exact name, else by the listed name it extends with a date, a
three-digit version or ``-latest`` (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``). A model not in
the table has its tokens reported and no price: the estimate says which models it could not price.

Prompt tokens a provider served from its prompt cache are priced at its cached-input price
(``Price.cached_input``: a quarter of the input price for OpenAI's gpt-4.1 family, a tenth for
Anthropic's reads and the gpt-5 family), and tokens Anthropic wrote to its cache at its write price
(``Price.cache_write``: 1.25 times the input price, five-minute cache); a price without them (a
user's ``(input, output)`` pair) bills both at the input price, never less than the provider would.

A model name ending in :data:`BATCH_SUFFIX` (``openai:gpt-4.1-mini@batch``: requests sent through
the provider's Batch API) is priced at :data:`BATCH_DISCOUNT` of its provider's list price.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from synth.llm.spec import parse_model_spec

PRICES_AS_OF = "2025-12-01"


class Price(NamedTuple):
    """US dollars per million input and output tokens, and per million prompt tokens read from
    (``cached_input``) and written to (``cache_write``) the provider's prompt cache (``None``:
    at the input price)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def scaled(self, share: float) -> Price:
        """Every rate times ``share`` (a Batch API's discount)."""
        return Price(*(None if rate is None else rate * share for rate in self))  # type: ignore[arg-type]


def _claude(input: float, output: float) -> Price:
    """An Anthropic price: cache reads at a tenth of the input price, five-minute writes at 1.25x."""
    return Price(input, output, round(input * 0.1, 6), round(input * 1.25, 6))


PRICES: dict[str, Price] = {
    # OpenAI (cached input: gpt-5 family a tenth, gpt-4.1 and o3/o4 a quarter, gpt-4o a half)
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "o3": Price(2.00, 8.00, 0.50),
    "o3-mini": Price(1.10, 4.40, 0.55),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "gpt-3.5-turbo": Price(0.50, 1.50),
    "text-embedding-3-small": Price(0.02, 0.0),
    "text-embedding-3-large": Price(0.13, 0.0),
    # Anthropic (cache reads a tenth of the input price, five-minute writes 1.25 times)
    "claude-opus-4-5": _claude(5.00, 25.00),
    "claude-sonnet-4-5": _claude(3.00, 15.00),
    "claude-haiku-4-5": _claude(1.00, 5.00),
    "claude-opus-4-1": _claude(15.00, 75.00),
    "claude-opus-4": _claude(15.00, 75.00),
    "claude-sonnet-4": _claude(3.00, 15.00),
    "claude-3-7-sonnet": _claude(3.00, 15.00),
    "claude-3-5-sonnet": _claude(3.00, 15.00),
    "claude-3-5-haiku": _claude(0.80, 4.00),
    "claude-3-haiku": _claude(0.25, 1.25),
    # Google Gemini (prompts up to 200k tokens; implicit cache hits of 2.5 models a tenth)
    "gemini-2.5-pro": Price(1.25, 10.00, 0.125),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.03),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01),
    "gemini-2.0-flash": Price(0.10, 0.40, 0.025),
    "gemini-2.0-flash-lite": Price(0.075, 0.30),
    # synth's offline model (synth.llm.offline): no request leaves the machine
    "offline:extractive": Price(0.0, 0.0),
}

#: what a model's usage name ends in when its requests went through a Batch API
BATCH_SUFFIX = "@batch"
#: the share of the list price a provider's Batch API charges (both: half, as of PRICES_AS_OF)
BATCH_DISCOUNT: dict[str, float] = {"openai": 0.5, "anthropic": 0.5}

_PROVIDERS = ("openai", "anthropic", "gemini", "function")
#: what a dated snapshot adds to a listed name: -20250514, -2024-08-06, -001, -latest, @20240620;
#: anything else (claude-opus-4-6, gpt-4o-audio) is another model, unpriced rather than mispriced
_SUFFIX = re.compile(r"^(-\d{8}|-\d{4}-\d{2}-\d{2}|-\d{3}|-latest|@\d{8}|@\d{3})$")


def price_for(
    model: str, prices: Mapping[str, Price | tuple[float, float]] | None = None
) -> Price | None:
    """The price of ``model`` (``"provider:model"`` or a bare name), or ``None`` when not listed;
    a name ending in :data:`BATCH_SUFFIX` at its provider's batch rate (None when it has none)."""
    if model.endswith(BATCH_SUFFIX):
        listed = model.removesuffix(BATCH_SUFFIX)
        share = BATCH_DISCOUNT.get(parse_model_spec(listed)[0] if ":" in listed else "")
        price = price_for(listed, prices)
        return None if price is None or share is None else price.scaled(share)
    table = {**PRICES, **{k: Price(*v) for k, v in (prices or {}).items()}}
    if model in table:
        return table[model]
    provider, listed_name = parse_model_spec(model) if model.strip() else ("", None)
    name = listed_name if listed_name is not None and provider in _PROVIDERS else model
    name = name.rsplit("/", 1)[-1]  # "models/gemini-2.5-flash", "openai/gpt-4o"
    if name in table:
        return table[name]
    best = None
    for listed in table:
        if name.startswith(listed) and _SUFFIX.match(name[len(listed) :]):
            if best is None or len(listed) > len(best):
                best = listed
    return table[best] if best else None


@dataclass
class CostEstimate:
    """An estimated cost in US dollars; ``None`` parts are models without a price."""

    total_usd: float
    by_model: dict[str, float | None] = field(default_factory=dict)
    by_label: dict[str, float] = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)
    prices_as_of: str = PRICES_AS_OF

    @property
    def complete(self) -> bool:
        """Whether every model used had a price (else ``total_usd`` is a lower bound)."""
        return not self.unpriced_models

    def to_dict(self) -> dict[str, Any]:
        return {
            "total_usd": round(self.total_usd, 6),
            "by_model": {k: None if v is None else round(v, 6) for k, v in self.by_model.items()},
            "by_label": {k: round(v, 6) for k, v in self.by_label.items()},
            "unpriced_models": list(self.unpriced_models),
            "prices_as_of": self.prices_as_of,
        }


def estimate_cost(
    usage: Any, prices: Mapping[str, Price | tuple[float, float]] | None = None
) -> CostEstimate:
    """The cost of a :class:`~synth.llm.usage.Usage` (tokens actually received, replies from
    synth's own cache free; prompt tokens from the provider's cache at its cached price)."""
    by_model: dict[str, float | None] = {}
    by_label: dict[str, float] = {}
    unpriced: set[str] = set()
    for (model, label), counts in usage.pairs().items():
        price = price_for(model, prices)
        if price is None:
            if counts.input_tokens or counts.output_tokens:
                unpriced.add(model)
            by_model.setdefault(model, None)
            continue
        usd = tokens_cost(
            price,
            counts.input_tokens,
            counts.output_tokens,
            counts.cached_input_tokens,
            counts.cache_write_tokens,
        )
        by_model[model] = (by_model.get(model) or 0.0) + usd
        by_label[label] = by_label.get(label, 0.0) + usd
    total = sum(v for v in by_model.values() if v is not None)
    return CostEstimate(
        total, dict(sorted(by_model.items())), dict(sorted(by_label.items())), sorted(unpriced)
    )


def tokens_cost(
    price: Price, input: float, output: float, cached_input: float = 0, cache_write: float = 0
) -> float:
    """Dollars for ``input`` prompt tokens (``cached_input`` of them read from the provider's
    prompt cache, ``cache_write`` written to it) and ``output`` completion tokens."""
    fresh = max(0.0, input - cached_input - cache_write)
    read = price.input if price.cached_input is None else price.cached_input
    write = price.input if price.cache_write is None else price.cache_write
    return (
        fresh * price.input + cached_input * read + cache_write * write + output * price.output
    ) / 1e6


def estimate_tokens(
    prompt: str, *, system: str | None = None, encoding: str = "cl100k_base"
) -> int:
    """About how many input tokens a request with this prompt (and system prompt) will use."""
    from synth._tokens import count_tokens

    # per-message framing of chat formats; an empty system prompt is not sent (every adapter
    # skips it), so the request is one message
    overhead = 8 if system else 4
    return (
        count_tokens(prompt, encoding)
        + (count_tokens(system, encoding) if system else 0)
        + overhead
    )


__all__ = [
    "BATCH_DISCOUNT",
    "BATCH_SUFFIX",
    "PRICES",
    "PRICES_AS_OF",
    "CostEstimate",
    "Price",
    "estimate_cost",
    "estimate_tokens",
    "price_for",
    "tokens_cost",
]
