"""Input generation: one request per context, from scratch and from examples, drops on failure."""

from __future__ import annotations

import json

import pytest

from synth.data import Context
from synth.errors import ConfigError, OutputParseError, RateLimitError
from synth.generate import inputs
from synth.generate.config import GenerationConfig, StylingConfig
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats

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


# ---- what the gaps mutmut found pin down ---------------------------------------------------------

MARK = "Custom. "
STYLING = StylingConfig(scenario="shop customers", task="support", input_format="chat message")


class Sent(FunctionModel):
    """A model that answers three inputs and records each request's prompt, label and schema."""

    def __init__(self, fn=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__(fn or (lambda p, s: json.dumps({"inputs": ["Q1?", "Q2?", "Q3?"]})))
        self.sent: list[tuple[str, str | None, dict]] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None):  # type: ignore[no-untyped-def]
        from synth.llm.structured import json_schema

        self.sent.append((prompt, label, json_schema(schema)))
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def _custom_prompts():  # type: ignore[no-untyped-def]
    from synth.stage.templates import PromptSet, default_prompts

    default = default_prompts()
    names = ("inputs", "inputs_from_scratch", "inputs_from_goldens")
    return PromptSet({name: MARK + default.text(name) for name in names})


def _ids(key: str, n: int) -> list[str]:
    from synth.generate.draft import draft_id

    return [draft_id(key, i) for i in range(n)]


def test_prompts_without_styling_hold_no_styling_lines_and_every_styling_line_when_given() -> None:
    bare = inputs.build_prompt(CONTEXT, 3)
    assert "context above.\n\nWrite 3 distinct" in bare
    styled = inputs.build_prompt(CONTEXT, 3, styling=STYLING)
    block = (
        "\nScenario: shop customers\nTask of the system under test: support\n"
        "Input format: chat message\n"
    )
    assert styled == bare.replace("above.\n\nWrite", "above.\n" + block + "\nWrite")
    examples = inputs.build_examples_prompt(["Where is it?"], 2, styling=STYLING)
    assert block in examples and "Scenario" not in inputs.build_examples_prompt(["Where?"], 2)
    scratch = inputs.build_scratch_prompt(2, STYLING)
    assert "Task of the system under test: support\n" in scratch


def test_check_reply_says_it_holds_no_input_and_keeps_the_replys_json() -> None:
    reply = inputs.InputsReply(inputs=[" ", ""])
    with pytest.raises(OutputParseError) as info:
        inputs.check_reply(reply, 2)
    assert str(info.value) == "the reply holds no input"
    assert info.value.raw == reply.model_dump_json()


def test_run_asks_for_its_count_in_its_prompts_and_schema_and_keeps_that_many() -> None:
    model = Sent()
    stats = StageStats(stage="inputs")
    config = GenerationConfig(max_goldens_per_context=2)
    styling = StylingConfig(scenario="homeowners")
    prompts = _custom_prompts()
    drafts = run_sync(
        inputs.run(CONTEXT, model, config, styling=styling, prompts=prompts, stats=stats)
    )
    assert [d.input for d in drafts] == ["Q1?", "Q2?"] and [d.id for d in drafts] == _ids(
        "ctx_solar", 2
    )
    prompt, label, schema = model.sent[0]
    assert prompt.startswith(MARK) and "Write 2 distinct" in prompt
    assert "Scenario: homeowners" in prompt and label == "inputs"
    assert schema["properties"]["inputs"]["maxItems"] == 2
    keyed = run_sync(inputs.run(CONTEXT, model, config, key="k1", stats=stats))
    assert [d.id for d in keyed] == _ids("k1", 2)
    # counts add up over calls given the same stats
    assert (stats.items_in, stats.items_out, stats.requests) == (2, 4, 2)
    assert "fewer_than_asked" not in stats.notes


def test_fewer_inputs_than_asked_are_noted_by_how_many() -> None:
    stats = StageStats(stage="inputs")
    config = GenerationConfig(max_goldens_per_context=5)
    drafts = run_sync(inputs.run(CONTEXT, Sent(), config, stats=stats))
    assert len(drafts) == 3 and stats.notes == {"fewer_than_asked": 2}


def test_a_failed_request_gives_one_empty_draft_with_a_stable_id() -> None:
    from synth.generate.draft import draft_id

    def model(prompt: str, system: str | None) -> str:
        raise RateLimitError("slow down")

    drafts = run_sync(inputs.run(CONTEXT, FunctionModel(model), GenerationConfig(), key="k2"))
    assert [(d.id, d.input) for d in drafts] == [(draft_id("k2", "failed"), "")]


def test_from_scratch_and_from_examples_pass_on_count_key_prompts_and_stats() -> None:
    model = Sent()
    stats = StageStats(stage="inputs")
    prompts = _custom_prompts()
    scratch = run_sync(inputs.run_from_scratch(2, model, STYLING, prompts=prompts, stats=stats))
    assert [d.id for d in scratch] == _ids("scratch:scratch", 2)
    assert model.sent[-1][0].startswith(MARK) and "Write 2 distinct" in model.sent[-1][0]
    assert model.sent[-1][2]["properties"]["inputs"]["maxItems"] == 2
    keyed = run_sync(inputs.run_from_scratch(1, model, STYLING, key="b3"))
    assert [d.id for d in keyed] == _ids("scratch:b3", 1)
    examples = run_sync(
        inputs.run_from_examples(
            ["Where is it?"], 2, model, styling=STYLING, prompts=prompts, stats=stats
        )
    )
    assert [d.id for d in examples] == _ids("examples:examples:none", 2)
    prompt = model.sent[-1][0]
    assert prompt.startswith(MARK) and "Write 2 new" in prompt and "Scenario: shop" in prompt
    assert "(no context given)" in prompt
    grounded = run_sync(inputs.run_from_examples(["Where?"], 1, model, context=CONTEXT, key="e"))
    assert [d.id for d in grounded] == _ids("examples:e:ctx_solar", 1)
    assert grounded[0].context == CONTEXT and "Solar panels convert" in model.sent[-1][0]
    assert (stats.items_in, stats.items_out, stats.requests) == (2, 4, 2)


def test_the_step_makes_drafts_from_examples_from_the_styling_or_from_the_context() -> None:
    from synth.generate.base import Source

    model = Sent()
    config = GenerationConfig(max_goldens_per_context=2)
    step = inputs.InputsStep(model, config, STYLING, _custom_prompts())
    examples = run_sync(step.run([], Source(key="s1", context=CONTEXT, examples=["Where?"])))
    assert [d.id for d in examples] == _ids("examples:s1:ctx_solar", 2)
    assert examples[0].context == CONTEXT
    prompt = model.sent[-1][0]
    assert prompt.startswith(MARK) and '<example index="1">\nWhere?' in prompt
    assert "Write 2 new" in prompt and "Scenario: shop customers" in prompt
    assert "Solar panels convert" in prompt
    scratch = run_sync(step.run([], Source(key="s2")))
    assert [d.id for d in scratch] == _ids("scratch:s2", 2) and scratch[0].context is None
    assert model.sent[-1][0].startswith(MARK + "You write inputs for evaluating an AI system.\n\n")
    assert "Write 2 distinct, realistic" in model.sent[-1][0]
    grounded = run_sync(step.run([], Source(key="s3", context=CONTEXT)))
    assert [d.id for d in grounded] == _ids("s3", 2) and grounded[0].context == CONTEXT
    prompt = model.sent[-1][0]
    assert prompt.startswith(MARK) and "You write questions" in prompt
    assert "Write 2 distinct" in prompt
    assert "Scenario: shop customers" in prompt
    assert [label for _, label, _ in model.sent] == ["inputs"] * 3
