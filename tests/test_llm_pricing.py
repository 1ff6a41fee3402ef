"""Prices, cost estimates from usage, and token estimates."""

from __future__ import annotations

import json

import pytest
import tiktoken
import tiktoken.registry
from tiktoken.core import Encoding

from synth import PRICES, Price, Usage, estimate_cost, estimate_tokens, make_llm
from synth.errors import ConfigError
from synth.llm.pricing import PRICES_AS_OF, CostEstimate, price_for


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


# ---- Exact prices, costs and token estimates: Batch API rates, model paths, the cost report's dict,
# how usage adds up per model and label, and the framing tokens of an estimate.  Written against
# the mutants that survived tests/test_llm_pricing.py (see docs/testing.md).


def test_batch_requests_cost_half_the_list_price_at_openai_and_anthropic() -> None:
    assert PRICES["gpt-4.1-mini"] == Price(0.40, 1.60, 0.10)
    assert price_for("openai:gpt-4.1-mini@batch") == Price(0.20, 0.80, 0.05)
    # a dated snapshot sent through the Batch API: the snapshot's list price, halved
    assert price_for("anthropic:claude-haiku-4-5-20251001@batch") == Price(0.50, 2.50, 0.05, 0.625)
    # without the suffix: list price
    assert price_for("openai:gpt-4.1-mini") == Price(0.40, 1.60, 0.10)


def test_batch_price_halves_the_prices_passed_in() -> None:
    mine = {"my-model": (3.0, 5.0)}
    assert price_for("openai:my-model@batch", mine) == Price(1.5, 2.5)
    assert price_for("openai:my-model@batch") is None


def test_batch_requests_have_no_price_without_a_provider_batch_rate() -> None:
    assert price_for("gemini:gemini-2.5-flash@batch") is None  # Gemini has no rate listed
    assert price_for("gpt-4.1-mini@batch") is None  # no provider named: no batch rate known
    # the provider comes from a "provider:" prefix only, never from a bare name
    assert price_for("openai@batch", {"openai": (1.0, 2.0)}) is None
    assert price_for("openai", {"openai": (1.0, 2.0)}) == Price(1.0, 2.0)
    assert price_for("openai:my-local-llama@batch") is None  # an unlisted model stays unpriced


def test_a_model_path_is_priced_by_its_last_part() -> None:
    vertex = "gemini:projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash"
    assert price_for(vertex) == Price(0.30, 2.50, 0.03)
    assert price_for("openrouter:openai/gpt-4o") == Price(2.50, 10.00, 1.25)


def test_cost_report_dict_rounds_every_amount_to_six_places() -> None:
    cost = CostEstimate(
        total_usd=0.12345678,
        by_model={"anthropic:claude-3-haiku": 0.12345678, "openai:local-model": None},
        by_label={"generate": 0.00123456789, "judge": 0.00000049},
        unpriced_models=["openai:local-model"],
    )
    assert cost.to_dict() == {
        "total_usd": 0.123457,
        "by_model": {"anthropic:claude-3-haiku": 0.123457, "openai:local-model": None},
        "by_label": {"generate": 0.001235, "judge": 0.0},
        "unpriced_models": ["openai:local-model"],
        "prices_as_of": PRICES_AS_OF,
    }
    assert PRICES_AS_OF == "2025-12-01"


def test_cost_adds_up_models_sharing_a_label_and_lists_unpriced_ones() -> None:
    usage = Usage()
    # recorded first: an unpriced model does not stop the models after it from being priced
    usage.record("openai:local-model", "judge", input_tokens=10)  # input tokens only
    usage.record("openai:gpt-4.1", "generate", input_tokens=1_000_000, output_tokens=250_000)
    usage.record("anthropic:claude-haiku-4-5", "generate", input_tokens=1_000_000)
    usage.record("openai:cached-only", "judge", cached_responses=3)  # no tokens received
    cost = estimate_cost(usage)
    assert cost == CostEstimate(
        total_usd=5.0,
        by_model={
            "anthropic:claude-haiku-4-5": 1.0,
            "openai:cached-only": None,
            "openai:gpt-4.1": 4.0,
            "openai:local-model": None,
        },
        by_label={"generate": 5.0},
        unpriced_models=["openai:local-model"],
    )
    assert not cost.complete
    assert cost.to_dict()["by_model"]["openai:gpt-4.1"] == 4.0


def test_cost_of_a_model_that_only_produced_output_tokens() -> None:
    usage = Usage()
    usage.record("openai:local-model", "judge", output_tokens=7)
    usage.record("openai:gpt-4o-mini", "judge", output_tokens=1_000_000)
    cost = estimate_cost(usage)
    assert cost.unpriced_models == ["openai:local-model"]
    assert cost.by_model == {"openai:gpt-4o-mini": 0.6, "openai:local-model": None}
    assert cost.by_label == {"judge": 0.6}
    assert cost.total_usd == 0.6


def test_token_estimate_is_the_tokens_plus_message_framing() -> None:
    prompt = "Paris is the capital of France."  # 7 tokens in cl100k_base
    system = "You are a careful judge."  # 6 tokens
    assert estimate_tokens(prompt) == 7 + 4  # one message
    assert estimate_tokens(prompt, system=system) == 7 + 6 + 8  # two messages
    assert estimate_tokens("x", system="Answer in one word.") == 1 + 5 + 8
    assert estimate_tokens(prompt, encoding="cl100k_base") == 11
    # an empty system prompt is not sent (the adapters skip it): one message, as without one
    assert estimate_tokens(prompt, system="") == 7 + 4


#: a byte-level encoding (one token per UTF-8 byte), registered the way a tiktoken plugin is
_BYTES = "synth-test-bytes"


def _bytes_encoding() -> dict[str, object]:
    ranks = {bytes([i]): i for i in range(256)}
    return {"name": _BYTES, "pat_str": r"[\s\S]", "mergeable_ranks": ranks, "special_tokens": {}}


def test_token_estimate_counts_prompt_and_system_in_the_encoding_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tiktoken.registry.list_encoding_names()  # loads the plugins' constructors
    assert tiktoken.registry.ENCODING_CONSTRUCTORS is not None
    monkeypatch.setitem(tiktoken.registry.ENCODING_CONSTRUCTORS, _BYTES, _bytes_encoding)
    monkeypatch.setitem(tiktoken.registry.ENCODINGS, _BYTES, Encoding(**_bytes_encoding()))
    prompt = "Paris is the capital of France."  # 31 bytes, 7 cl100k_base tokens
    system = "Réponds en un mot."  # 19 bytes, more than its cl100k_base tokens
    assert estimate_tokens(prompt, encoding=_BYTES) == 31 + 4
    assert estimate_tokens(prompt, system=system, encoding=_BYTES) == 31 + 19 + 8


def test_token_estimate_in_an_unknown_encoding_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown tiktoken encoding 'cl100k'"):
        estimate_tokens("Paris is the capital of France.", encoding="cl100k")
