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
from synth.generate.stats import StageStats
from synth.llm.base import FunctionModel, run_sync

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
    assert "using only the context above" in prompt
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
    ) == ["a", "b"]


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
    run_sync(expected.run(drafts, FunctionModel(answerer), styling=STYLING, stats=stats))
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
    run_sync(expected.run(drafts, FunctionModel(half), styling=STYLING, stats=stats))
    assert drafts[0].kept and drafts[0].expected_output == "Flour: answer to A?"
    assert drafts[1].drop_reason == "model_error:invalid_output"
    assert stats.dropped == {"model_error:invalid_output": 1}
