"""Input generation: one request per context, from scratch and from examples, drops on failure."""

from __future__ import annotations

import json

import pytest

from synth.data import Context
from synth.errors import ConfigError, OutputParseError, RateLimitError
from synth.generate import inputs
from synth.generate.config import GenerationConfig, StylingConfig
from synth.generate.stats import StageStats
from synth.llm.base import FunctionModel, run_sync

CONTEXT = Context(
    id="ctx_solar",
    chunk_ids=["s#0", "s#1"],
    texts=["Solar panels convert sunlight into electricity.", "An inverter turns DC into AC."],
    source_files=["solar.txt", "solar.txt"],
)


def test_build_prompt_shows_context_count_and_styling() -> None:
    styling = StylingConfig(
        scenario="homeowners asking an installer", input_format="short question"
    )
    prompt = inputs.build_prompt(CONTEXT, 3, styling=styling)
    assert (
        '<context>\n<passage index="1">\nSolar panels convert sunlight' in prompt
        and '<passage index="2">\nAn inverter' in prompt
    )
    assert "Write 3 distinct inputs" in prompt
    assert (
        "Scenario: homeowners asking an installer" in prompt
        and "Input format: short question" in prompt
    )
    assert "answerable from the context above alone" in prompt


def test_scratch_prompt_requires_styling() -> None:
    with pytest.raises(ConfigError):
        inputs.build_scratch_prompt(2, StylingConfig(scenario="x"))
    prompt = inputs.build_scratch_prompt(
        2, StylingConfig(scenario="bank customers", task="answer", input_format="email")
    )
    assert (
        "Scenario: bank customers" in prompt
        and "Input format: email" in prompt
        and "Write 2" in prompt
    )


def test_examples_prompt_lists_examples() -> None:
    prompt = inputs.build_examples_prompt(
        ["How do I reset my card?", "Why was I charged twice?"], 4
    )
    assert '<examples>\n<example index="1">\nHow do I reset my card?\n</example>' in prompt
    assert "Write 4 new" in prompt


def test_parse_cleans_and_limits() -> None:
    text = json.dumps(
        {
            "inputs": [
                "  What is a panel? ",
                "",
                "What is a panel?",
                "How does an inverter work?",
                "Third?",
            ]
        }
    )
    assert inputs.parse(text, 2) == ["What is a panel?", "How does an inverter work?"]


@pytest.mark.parametrize(
    "text",
    [
        "Here are questions: 1. a",
        json.dumps({"inputs": []}),
        json.dumps({"inputs": "one"}),
        json.dumps({"questions": ["a"]}),
    ],
)
def test_parse_malformed(text: str) -> None:
    with pytest.raises(OutputParseError) as info:
        inputs.parse(text, 2)
    assert info.value.raw == text


def test_run_makes_drafts_from_one_request() -> None:
    prompts_seen: list[str] = []

    def model(prompt: str, system: str | None) -> str:
        prompts_seen.append(prompt)
        assert "Solar panels" in prompt
        return json.dumps(
            {"inputs": ["What do solar panels convert?", "What does an inverter do?"]}
        )

    stats = StageStats(stage="inputs")
    drafts = run_sync(inputs.run(CONTEXT, FunctionModel(model), GenerationConfig(), stats=stats))
    assert [d.input for d in drafts] == [
        "What do solar panels convert?",
        "What does an inverter do?",
    ]
    assert all(d.context == CONTEXT and d.kept for d in drafts)
    assert len({d.id for d in drafts}) == 2
    assert len(prompts_seen) == 1 and stats.requests == 1
    assert (stats.items_in, stats.items_out) == (1, 2)
    again = run_sync(inputs.run(CONTEXT, FunctionModel(model), GenerationConfig()))
    assert [d.id for d in again] == [d.id for d in drafts]


def test_run_model_failure_becomes_a_dropped_draft() -> None:
    def model(prompt: str, system: str | None) -> str:
        raise RateLimitError("slow down")

    stats = StageStats(stage="inputs")
    drafts = run_sync(inputs.run(CONTEXT, FunctionModel(model), GenerationConfig(), stats=stats))
    assert len(drafts) == 1 and not drafts[0].kept
    assert drafts[0].drop_reason == "model_error:rate_limit" and drafts[0].dropped_at == "inputs"
    assert drafts[0].context == CONTEXT
    assert stats.dropped == {"model_error:rate_limit": 1} and stats.items_out == 0


def test_run_unparseable_reply_is_a_drop() -> None:
    drafts = run_sync(
        inputs.run(CONTEXT, FunctionModel(lambda p, s: "sorry, I cannot"), GenerationConfig())
    )
    assert drafts[0].drop_reason == "model_error:invalid_output"


def test_from_scratch_and_from_examples() -> None:
    def model(prompt: str, system: str | None) -> str:
        if '<example index="1">' in prompt:
            return json.dumps({"inputs": ["Can I freeze my card?"]})
        return json.dumps(
            {"inputs": ["Where is my parcel?", "Can I change the address?", "Refund?"]}
        )

    styling = StylingConfig(scenario="shop customers", task="support", input_format="chat message")
    scratch = run_sync(inputs.run_from_scratch(3, FunctionModel(model), styling, key="b0"))
    assert [d.input for d in scratch][:1] == ["Where is my parcel?"] and all(
        d.context is None for d in scratch
    )
    examples = run_sync(
        inputs.run_from_examples(
            ["How do I block my card?"], 1, FunctionModel(model), context=CONTEXT
        )
    )
    assert [d.input for d in examples] == ["Can I freeze my card?"] and examples[
        0
    ].context == CONTEXT
