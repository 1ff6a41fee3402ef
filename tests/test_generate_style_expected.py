"""Styling (one rewrite per input, seeded persona) and expected outputs (one request per context)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from synth.data import Context
from synth.errors import BadRequestError, OutputParseError
from synth.generate import expected, style
from synth.generate.config import StylingConfig
from synth.generate.draft import Draft
from synth.llm.base import FunctionModel, run_sync
from synth.stage.stats import StageStats

CTX_A = Context(
    id="ctx_a", chunk_ids=["a#0"], texts=["Flour is milled grain."], source_files=["a.txt"]
)
CTX_B = Context(
    id="ctx_b", chunk_ids=["b#0"], texts=["Yeast makes dough rise."], source_files=["b.txt"]
)
STYLING = StylingConfig(
    scenario="home bakers",
    task="answer baking questions",
    input_format="casual chat message",
    expected_output_format="two sentences",
    personas=["a retired chef", "a student on a budget", "a busy parent"],
)
ITEM = re.compile(r'<input index="(\d+)">\n(.*?)\n</input>', re.DOTALL)


def stylist(prompt: str, system: str | None) -> str:
    persona = re.search(r"Write as this user: (.*)\n", prompt)
    text = re.search(r"\nInput:\n<input>\n(.*?)\n</input>\n\nKeep its meaning", prompt, re.DOTALL)
    assert text is not None
    who = persona.group(1) if persona else "anyone"
    return json.dumps({"input": f"[{who}] {text.group(1)}"})


def answerer(prompt: str, system: str | None) -> str:
    items = ITEM.findall(prompt)
    assert "Write each answer in this format: two sentences" in prompt
    context = "Flour" if "Flour is milled" in prompt else "Yeast"
    return json.dumps(
        {
            "outputs": [
                {"index": int(i), "expected_output": f"{context}: answer to {q}"} for i, q in items
            ]
        }
    )


def test_style_prompt_and_parse() -> None:
    prompt = style.build_prompt("What is flour?", STYLING, "a retired chef", CTX_A)
    assert (
        "Write as this user: a retired chef" in prompt
        and "Input format: casual chat message" in prompt
    )
    assert "Flour is milled grain." in prompt
    assert style.parse('{"input": "hey, what is flour?"}') == "hey, what is flour?"
    with pytest.raises(OutputParseError):
        style.parse('{"input": " "}')


def test_style_rewrites_each_input_with_a_seeded_persona() -> None:
    def make() -> list[Draft]:
        return [Draft(id=f"d{i}", input=f"Q{i}?", context=CTX_A) for i in range(30)]

    stats = StageStats(stage="style")
    first = run_sync(style.run(make(), FunctionModel(stylist), STYLING, seed=4, stats=stats))
    again = run_sync(style.run(make(), FunctionModel(stylist), STYLING, seed=4))
    assert stats.requests == 30 and stats.items_out == 30
    assert [d.persona for d in first] == [d.persona for d in again]
    assert Counter(d.persona for d in first).keys() == set(STYLING.personas)
    for draft in first:
        assert draft.input == f"[{draft.persona}] {draft.history[-1]['input']}"
        assert draft.styling == {
            "scenario": "home bakers",
            "task": "answer baking questions",
            "input_format": "casual chat message",
            "expected_output_format": "two sentences",
        }


def test_style_without_rewriting_fields_makes_no_request() -> None:
    calls: list[str] = []
    drafts = [Draft(id="d", input="Q?", context=CTX_A)]
    run_sync(
        style.run(
            drafts,
            FunctionModel(lambda p, s: calls.append(p) or ""),
            StylingConfig(expected_output_format="bullets"),
            seed=0,
        )
    )
    assert (
        calls == []
        and drafts[0].input == "Q?"
        and drafts[0].styling == {"expected_output_format": "bullets"}
    )


def test_style_failure_drops() -> None:
    def broken(prompt: str, system: str | None) -> str:
        raise BadRequestError("refused")

    drafts = [Draft(id="d", input="Q?", context=CTX_A)]
    run_sync(style.run(drafts, FunctionModel(broken), STYLING, seed=0))
    assert drafts[0].drop_reason == "model_error:bad_request" and drafts[0].dropped_at == "style"


def test_expected_prompt_and_parse() -> None:
    prompt = expected.build_prompt(["What is flour?", "Is it grain?"], CTX_A, "two sentences")
    assert ITEM.findall(prompt) == [("1", "What is flour?"), ("2", "Is it grain?")]
    assert "using only what the quotes" in prompt and "Flour is milled grain." in prompt
    assert expected.parse(
        json.dumps(
            {
                "outputs": [
                    {"index": 2, "expected_output": "b"},
                    {"index": 1, "expected_output": "a"},
                ]
            }
        ),
        2,
    ) == [expected.Answer("a"), expected.Answer("b")]


@pytest.mark.parametrize(
    ("text", "n"),
    [
        (json.dumps({"outputs": [{"index": 1, "expected_output": "a"}]}), 2),
        (json.dumps({"outputs": [{"index": 1, "expected_output": "  "}]}), 1),
        (json.dumps({"outputs": [{"index": 1, "answer": "a"}]}), 1),
        ("The answer is a.", 1),
    ],
    ids=["missing", "blank", "wrong-field", "prose"],
)
def test_expected_parse_malformed(text: str, n: int) -> None:
    with pytest.raises(OutputParseError) as info:
        expected.parse(text, n)
    assert info.value.raw == text


def test_expected_answers_one_request_per_context() -> None:
    drafts = [Draft(id=f"a{i}", input=f"A{i}?", context=CTX_A) for i in range(2)]
    drafts += [Draft(id=f"b{i}", input=f"B{i}?", context=CTX_B) for i in range(2)]
    stats = StageStats(stage="expected")
    run_sync(
        expected.run(
            drafts, FunctionModel(answerer), styling=STYLING, stats=stats, grounding_threshold=0
        )
    )
    assert stats.requests == 2 and stats.items_out == 4
    assert [d.expected_output for d in drafts] == [
        "Flour: answer to A0?",
        "Flour: answer to A1?",
        "Yeast: answer to B0?",
        "Yeast: answer to B1?",
    ]


def test_expected_failure_drops_that_context_only() -> None:
    def half(prompt: str, system: str | None) -> str:
        if "Yeast" in prompt:
            return "I don't know"
        return answerer(prompt, system)

    drafts = [Draft(id="a", input="A?", context=CTX_A), Draft(id="b", input="B?", context=CTX_B)]
    stats = StageStats(stage="expected")
    run_sync(
        expected.run(
            drafts, FunctionModel(half), styling=STYLING, stats=stats, grounding_threshold=0
        )
    )
    assert drafts[0].kept and drafts[0].expected_output == "Flour: answer to A?"
    assert drafts[1].drop_reason == "model_error:invalid_output"
    assert stats.dropped == {"model_error:invalid_output": 1}


def test_expected_prompt_without_a_format_only_lacks_the_format_line() -> None:
    with_format = expected.build_prompt(["What is flour?"], CTX_A, "two sentences")
    without = expected.build_prompt(["What is flour?"], CTX_A)
    line = "\nWrite each answer in this format: two sentences\n"
    assert line in with_format and with_format.replace(line, "") == without


def test_expected_prompt_with_feedback_only_adds_the_problems_block() -> None:
    feedback = ["the quote was not found", "the answer is in French"]
    told = expected.build_prompt(["What is flour?", "Is it grain?"], CTX_A, feedback=feedback)
    block = (
        "\nYour earlier answers to these inputs were not supported by the context or not in the"
        " language asked for (one problem per input, in order):\n<problems>\n"
        '<problem index="1">\nthe quote was not found\n</problem>\n'
        '<problem index="2">\nthe answer is in French\n</problem>\n'
        "</problems>\nAnswer again, quoting the context exactly.\n"
    )
    assert told.count(block) == 1
    untold = expected.build_prompt(["What is flour?", "Is it grain?"], CTX_A)
    assert told.replace(block, "") == untold


def test_expected_check_reply_says_what_it_lacks_and_keeps_the_replys_json() -> None:
    short = expected.ExpectedReply.model_validate(
        {"outputs": [{"index": 1, "expected_output": "a"}]}
    )
    with pytest.raises(OutputParseError) as info:
        expected.check_reply(short, 2)
    assert str(info.value) == "the reply answers items [1], expected 1..2"
    assert info.value.raw == short.model_dump_json()
    blank = json.dumps({"outputs": [{"index": 1, "expected_output": "  "}]})
    with pytest.raises(OutputParseError) as info:
        expected.parse(blank, 1)
    assert str(info.value) == "item 1: the answer is blank"


class Recording(FunctionModel):
    """A function model that records every request's prompt and label."""

    def __init__(self, fn) -> None:  # type: ignore[no-untyped-def]
        super().__init__(fn)
        self.sent: list[tuple[str, str | None]] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None):  # type: ignore[no-untyped-def]
        self.sent.append((prompt, label))
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def test_expected_step_passes_on_its_prompts_label_and_format() -> None:
    from synth.generate.base import Source
    from synth.stage.templates import PromptSet

    prompts = PromptSet({"expected": "Answer $count from $context:\n$inputs$output_format"})

    def reply(prompt: str, system: str | None) -> str:
        assert prompt.startswith("Answer 2 from <context>")
        items = ITEM.findall(prompt)
        outputs = [{"index": int(i), "expected_output": f"answer to {q}"} for i, q in items]
        return json.dumps({"outputs": outputs})

    model = Recording(reply)
    drafts = [Draft(id=f"a{i}", input=f"A{i}?", context=CTX_A) for i in range(2)]
    step = expected.ExpectedStep(model, STYLING, prompts, grounding_threshold=0)
    out = run_sync(step.run(drafts, Source(key="k", context=CTX_A)))
    assert out == drafts and [d.expected_output for d in drafts] == [
        "answer to A0?",
        "answer to A1?",
    ]
    assert [label for _, label in model.sent] == ["expected"]
    assert "\nWrite each answer in this format: two sentences\n" in model.sent[0][0]
    # run() itself: the same prompts, and no styling at all means no format line
    again = [Draft(id=f"b{i}", input=f"B{i}?", context=CTX_A) for i in range(2)]
    run_sync(expected.run(again, model, prompts=prompts, grounding_threshold=0))
    assert model.sent[1][0].startswith("Answer 2 from") and "Write each" not in model.sent[1][0]
    # a question type's step adds what its answers must do to the format
    from synth.generate.question_types import expected_note

    typed = expected.ExpectedStep(model, STYLING, prompts, 0, question_type="double")
    typed_drafts = [Draft(id=f"c{i}", input=f"C{i}?", context=CTX_A) for i in range(2)]
    run_sync(typed.run(typed_drafts, Source(key="k", context=CTX_A)))
    note = expected_note("double")
    assert note and f"format: two sentences; {note}\n" in model.sent[2][0]


def test_expected_unanswered_item_is_dropped_by_the_step_with_what_was_wrong() -> None:
    def misnumbered(prompt: str, system: str | None) -> str:
        return json.dumps({"outputs": [{"index": 5, "expected_output": "x"}]})

    drafts = [Draft(id="a", input="A?", context=CTX_A), Draft(id="b", input="B?", context=CTX_A)]
    run_sync(expected.run(drafts, FunctionModel(misnumbered), styling=STYLING))
    for draft in drafts:
        assert (draft.dropped_at, draft.drop_reason) == ("expected", "model_error:invalid_output")
        assert draft.drop_detail == "the reply answers items [5], expected 1..2"


class SentStyle(FunctionModel):
    """The stylist as a model that records each request's prompt, label and schema."""

    def __init__(self) -> None:
        super().__init__(lambda prompt, system: stylist(prompt.removeprefix("Custom. "), system))
        self.sent: list[tuple[str, str | None, type | None]] = []

    async def arequest(self, prompt, *, system=None, schema=None, label=None):  # type: ignore[no-untyped-def]
        self.sent.append((prompt, label, schema))
        return await super().arequest(prompt, system=system, schema=schema, label=label)


def test_style_persona_comes_from_the_drafts_own_generator_for_the_style_stage() -> None:
    import random

    for draft_id in ("d0", "d1", "d2", "d3", "d4", "d5"):
        rng = random.Random(f"4:style:{draft_id}")
        assert style.choose_persona(STYLING, 4, draft_id) == rng.choice(STYLING.personas)
    assert style.choose_persona(StylingConfig(task="t"), 4, "d0") is None


def test_style_prompt_holds_every_styling_line() -> None:
    prompt = style.build_prompt("What is flour?", STYLING, "a retired chef", CTX_A)
    block = (
        "\nScenario: home bakers\nTask of the system under test: answer baking questions\n"
        "Input format: casual chat message\nWrite as this user: a retired chef\n"
    )
    assert block in prompt


def test_style_check_reply_and_parse_say_the_restyled_input_is_blank_and_keep_the_raw_text() -> (
    None
):
    reply = style.StyleReply(input="  ")
    with pytest.raises(OutputParseError) as info:
        style.check_reply(reply)
    assert str(info.value) == "the restyled input is blank"
    assert info.value.raw == reply.model_dump_json()
    with pytest.raises(OutputParseError) as info:
        style.check_reply(reply, raw="as sent")
    assert info.value.raw == "as sent"
    text = '{ "input" : " " }'
    with pytest.raises(OutputParseError) as info:
        style.parse(text)
    assert info.value.raw == text


def test_the_style_step_restyles_with_its_seed_prompts_and_the_context() -> None:
    import random

    from synth.generate.base import Source
    from synth.stage.templates import PromptSet, default_prompts

    prompts = PromptSet({"style": "Custom. " + default_prompts().text("style")})
    model = SentStyle()
    step = style.StyleStep(model, STYLING, 4, prompts)
    drafts = [Draft(id=f"d{i}", input=f"Q{i}?", context=CTX_A) for i in range(4)]
    out = run_sync(step.run(drafts, Source(key="k", context=CTX_A)))
    assert out == drafts
    for draft in drafts:
        persona = random.Random(f"4:style:{draft.id}").choice(STYLING.personas)
        assert (
            draft.persona == persona and draft.input == f"[{persona}] {draft.history[0]['input']}"
        )
        assert draft.history == [
            {"stage": "style", "input": draft.history[0]["input"], "persona": persona}
        ]
    for prompt, label, schema in model.sent:
        assert prompt.startswith("Custom. ") and "Flour is milled grain." in prompt
        assert label == "style" and schema is style.StyleReply
    # run() itself takes the seed the same way
    again = [Draft(id=f"d{i}", input=f"Q{i}?", context=CTX_A) for i in range(4)]
    run_sync(style.run(again, FunctionModel(stylist), STYLING, seed=4))
    assert [d.persona for d in again] == [d.persona for d in drafts]
