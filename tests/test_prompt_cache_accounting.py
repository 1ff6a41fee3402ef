"""The provider's prompt cache, counted end to end: the tokens it served in usage and cost, per
stage in the manifest, in the stage table and in the plan's estimate."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI

from synth import RetryConfig, make_llm
from synth.contexts.config import ContextConstructionConfig
from synth.data import Context
from synth.generate.config import EvolutionConfig, GenerationConfig
from synth.llm.pricing import PRICES, Price, tokens_cost
from synth.llm.usage import Usage
from synth.run.manifest import usage_by_stage
from synth.run.plan import CACHE_MIN_TOKENS, PlanInputs, cached_prefix, make_plan
from synth.run.setup import RunConfigs
from synth.stage.templates import PromptSet

CONTEXT = "The river floods each spring and the town keeps its boats on the hill. " * 120


def test_openai_cached_prompt_tokens_are_counted_and_priced_at_a_quarter() -> None:
    with FakeOpenAI(prompt_cache=True, reply="ok") as server:
        llm = make_llm(
            "openai:gpt-4.1-mini",
            base_url=server.url,
            api_key="sk-test",
            retry=RetryConfig(initial_delay=0.001, max_delay=0.01),
        )
        llm.complete(f"<context>{CONTEXT}</context> Ask one question.", label="inputs")
        llm.complete(f"<context>{CONTEXT}</context> Answer it.", label="expected")
    by_label = llm.usage.by_label()
    assert by_label["inputs"].cached_input_tokens == 0
    cached = by_label["expected"].cached_input_tokens
    assert CACHE_MIN_TOKENS <= cached < by_label["expected"].input_tokens
    price = PRICES["gpt-4.1-mini"]
    assert price.cached_input == price.input / 4
    counts = by_label["expected"]
    fresh = counts.input_tokens - cached
    expected = (fresh * 0.40 + cached * 0.10 + counts.output_tokens * 1.60) / 1e6
    assert llm.usage.cost().by_label["expected"] == pytest.approx(expected)


def test_a_price_without_cache_rates_bills_cached_tokens_at_the_input_price() -> None:
    assert tokens_cost(Price(1.0, 2.0), 1_000_000, 0, cached_input=600_000) == pytest.approx(1.0)
    assert tokens_cost(Price(1.0, 2.0, 0.1, 1.25), 1_000_000, 0, 600_000, 400_000) == (
        pytest.approx(0.06 + 0.5)
    )


def test_manifest_rows_carry_each_stages_cached_prompt_tokens() -> None:
    usage = Usage()
    usage.record("openai:gpt-4.1-mini", "filter", requests=1, input_tokens=2_000,
                 cached_input_tokens=1_536)  # fmt: skip
    usage.record("openai:gpt-4.1-mini", "filter_rewrite", requests=1, input_tokens=2_000,
                 cached_input_tokens=1_024)  # fmt: skip
    usage.record("anthropic:claude-sonnet-4-5", "inputs", requests=1, input_tokens=3_000,
                 cache_write_tokens=2_048)  # fmt: skip
    rows = usage_by_stage([usage])
    assert rows["filter"]["cached_input_tokens"] == 2_560
    assert rows["inputs"]["cache_write_tokens"] == 2_048
    # written at 1.25 times the input price
    assert rows["inputs"]["cost_usd"] == pytest.approx((952 * 3.0 + 2_048 * 3.75) / 1e6)


def _configs(prompts: dict[str, str] | None = None) -> RunConfigs:
    return RunConfigs(
        generation=GenerationConfig(max_goldens_per_context=2),
        contexts=ContextConstructionConfig(),
        filtration=None,
        evolution=EvolutionConfig(num_evolutions=1),
        styling=None,
        seed=1,
        context_critic=False,
        prompt_overrides=prompts,
    )


CONTEXT_FIRST = {
    "inputs": "<context>$context</context>\nWrite $count questions.",
    "expected": "<context>$context</context>\nAnswer: $inputs",
}


def test_the_plan_assumes_cached_prefixes_only_for_steps_that_start_like_the_first() -> None:
    prompts = PromptSet(CONTEXT_FIRST)
    assert cached_prefix(prompts, "inputs", [3_000]) == 0  # the first request writes it
    shared = cached_prefix(prompts, "expected", [3_000])
    assert 3_000 <= shared <= 3_200 and shared % 128 == 0
    assert cached_prefix(prompts, "expected", [200]) == 0  # under the cache's minimum
    other = PromptSet(
        {**CONTEXT_FIRST, "expected": "Answer $inputs from <context>$context</context>"}
    )
    assert cached_prefix(other, "expected", [3_000]) == 0


def test_the_plan_prices_the_cached_prefix_and_says_what_it_assumed() -> None:
    contexts = [Context(id=f"x{i}", chunk_ids=[f"c{i}"], texts=[CONTEXT], source_files=["a.txt"])
                for i in range(3)]  # fmt: skip
    inputs = PlanInputs(contexts, [], files=1, chunks=3)
    model = "openai:gpt-4.1-mini"
    cached = make_plan(inputs, _configs(CONTEXT_FIRST), generator=model, critic=model)
    plain = make_plan(
        inputs,
        _configs({**CONTEXT_FIRST, "expected": "Answer: $inputs\n<context>$context</context>"}),
        generator=model,
        critic=model,
    )
    expected = next(s for s in cached.stages if s.stage == "expected")
    assert expected.cached_input_tokens > 0
    assert cached.cached_input_share > 0 and plain.cached_input_share < cached.cached_input_share
    assert cached.cost_usd is not None and plain.cost_usd is not None
    assert cached.cost_usd < plain.cost_usd
    assert any("prompt cache" in note for note in cached.notes)
    assert cached.to_json()["cached_input_share"] == cached.cached_input_share


def test_the_plan_counts_the_cached_prefix_of_the_final_checks_requests_with_the_context() -> None:
    """The final check sends each batch twice: with the context (its prefix repeats the inputs
    step's, so it is cached) and with the inputs alone (nothing cached)."""
    import dataclasses

    from synth._tokens import count_tokens
    from synth.generate.config import FiltrationConfig

    contexts = [Context(id=f"x{i}", chunk_ids=[f"c{i}"], texts=[CONTEXT], source_files=["a.txt"])
                for i in range(3)]  # fmt: skip
    configs = dataclasses.replace(_configs(), filtration=FiltrationConfig())
    model = "openai:gpt-4.1-mini"
    inputs = PlanInputs(contexts, [], files=1, chunks=3)
    plan = make_plan(inputs, configs, generator=model, critic=model)
    check = next(s for s in plan.stages if s.stage == "check")
    prefix = cached_prefix(configs.prompts, "check", [count_tokens(CONTEXT)] * 3)
    assert prefix >= CACHE_MIN_TOKENS
    # half its requests read the context's prefix from the cache, the other half nothing
    assert check.cached_input_tokens == check.requests // 2 * prefix < check.input_tokens


def test_what_every_input_must_be_opens_every_step_of_a_context_and_counts_in_the_cached_prefix() -> (
    None
):
    """The packaged prompts state the rules for an input once, before the orientation and the
    context, in every step of a context: a context a little under the cache's minimum reaches it
    with them, as the fake provider's cache and the plan both count."""
    from synth._tokens import count_tokens
    from synth.data import Context
    from synth.generate import expected, inputs
    from synth.stage.templates import SYSTEM, default_prompts

    rules = count_tokens(default_prompts().text("input_rules"))
    assert rules >= 100
    # a context whose prompts share under 1,024 tokens without the rules, over it with them
    text = "The river floods each spring and the town keeps its boats on the hill. "
    body = text * ((CACHE_MIN_TOKENS - count_tokens(SYSTEM) - rules // 2) // count_tokens(text))
    context = Context(id="x", chunk_ids=["c"], texts=[body], source_files=["river.md"])
    assert count_tokens(SYSTEM) + count_tokens(body) < CACHE_MIN_TOKENS
    assert cached_prefix(default_prompts(), "expected", [count_tokens(body)]) >= CACHE_MIN_TOKENS
    with FakeOpenAI(prompt_cache=True, reply="ok") as server:
        llm = make_llm("openai:gpt-4.1-mini", base_url=server.url, api_key="sk-test")
        llm.complete(inputs.build_prompt(context, 2), system=SYSTEM, label="inputs")
        question = ["How often does the river flood?"]
        llm.complete(expected.build_prompt(question, context), system=SYSTEM, label="expected")
    assert llm.usage.by_label()["expected"].cached_input_tokens >= CACHE_MIN_TOKENS
