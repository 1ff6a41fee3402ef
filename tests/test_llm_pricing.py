"""Prices, cost estimates from usage, and token estimates."""

from __future__ import annotations

import json

import pytest

from synth import PRICES, Price, Usage, estimate_cost, estimate_tokens, make_llm
from synth.llm.pricing import PRICES_AS_OF, price_for


def test_prices_are_found_by_name_and_dated_snapshot() -> None:
    assert price_for("gpt-4o") == PRICES["gpt-4o"]
    assert price_for("openai:gpt-4o-mini-2024-07-18") == PRICES["gpt-4o-mini"]
    assert price_for("anthropic:claude-sonnet-4-20250514") == PRICES["claude-sonnet-4"]
    assert price_for("gemini:models/gemini-2.5-flash") == PRICES["gemini-2.5-flash"]
    assert price_for("gpt-4o-mini") != price_for("gpt-4o")  # the longest name wins
    assert price_for("openai:my-local-llama") is None
    assert price_for("gpt-5-turbo-ultra") is None  # a suffix that is not a date is another model
    assert price_for("claude-sonnet-4-5-20250929") == PRICES["claude-sonnet-4-5"]
    assert price_for("gemini-2.0-flash-001") == PRICES["gemini-2.0-flash"]
    assert price_for("claude-3-5-haiku-latest") == PRICES["claude-3-5-haiku"]
    assert price_for("claude-opus-4-6") is None  # a newer model, not claude-opus-4 at its price
    assert price_for("my-model", {"my-model": (1.0, 2.0)}) == Price(1.0, 2.0)
    assert len(PRICES_AS_OF) == 10


def test_cost_of_usage_by_model_and_label() -> None:
    usage = Usage()
    usage.record("openai:gpt-4o-mini", "generate", input_tokens=1_000_000, output_tokens=500_000)
    usage.record("openai:gpt-4o-mini", "judge", input_tokens=2_000_000, output_tokens=0)
    usage.record("openai:local-model", "judge", input_tokens=10, output_tokens=10)
    cost = estimate_cost(usage)
    price = PRICES["gpt-4o-mini"]
    assert cost.by_model["openai:gpt-4o-mini"] == pytest.approx(
        3 * price.input + 0.5 * price.output
    )
    assert cost.by_model["openai:local-model"] is None
    assert cost.unpriced_models == ["openai:local-model"] and not cost.complete
    assert cost.by_label["judge"] == pytest.approx(2 * price.input)
    assert cost.total_usd == pytest.approx(cost.by_model["openai:gpt-4o-mini"])
    assert json.loads(json.dumps(cost.to_dict()))["prices_as_of"] == PRICES_AS_OF
    mine = estimate_cost(usage, prices={"local-model": (1_000_000.0, 0.0)})
    assert mine.complete and mine.by_model["openai:local-model"] == pytest.approx(10.0)


def test_cached_responses_cost_nothing() -> None:
    llm = make_llm(lambda p, s: "reply", cache={})
    llm.complete("p")
    llm.complete("p")
    assert llm.usage.total.cached_responses == 1
    assert llm.usage.cost().total_usd == 0.0


def test_token_estimate_grows_with_the_prompt() -> None:
    short = estimate_tokens("Paris is the capital of France.")
    longer = estimate_tokens("Paris is the capital of France. " * 20)
    assert 5 < short < longer
    assert estimate_tokens("x", system="You are a careful judge.") > estimate_tokens("x")
