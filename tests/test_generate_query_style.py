"""Query style and length: drawn per input by weight, asked of the styling model, recorded."""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from pathlib import Path

import fake_openai
import pytest
import synth_replies

from synth import Synthesizer
from synth.data import Context
from synth.errors import ConfigError
from synth.generate import style
from synth.generate.config import StylingConfig
from synth.generate.draft import Draft
from synth.generate.query_style import (
    QUERY_LENGTHS,
    QUERY_STYLES,
    check_distribution,
    draw,
    query_lines,
)
from synth.llm.base import FunctionModel, run_sync

CTX = Context(id="c", chunk_ids=["a#0"], texts=["Flour is milled grain."], source_files=["a.txt"])
SAMPLE = str(Path(__file__).resolve().parent.parent / "sample_docs")


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("query_styles", {"shouty": 1.0}, "unknown query style 'shouty'; use one of formal"),
        ("query_lengths", {"tiny": 1.0}, "unknown query length 'tiny'; use one of short"),
        ("query_styles", {"formal": -1.0}, "query style 'formal' needs a weight >= 0"),
        ("query_lengths", {"short": float("nan")}, "needs a weight >= 0"),
        ("query_styles", {"formal": 0.0, "casual": 0}, "at least one query style needs a weight"),
    ],
)
def test_a_bad_distribution_is_one_clear_error(field: str, value: dict, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        StylingConfig(**{field: value})


def test_draws_follow_the_weights_and_never_pick_a_zero_weight() -> None:
    rng = random.Random(3)
    counts = Counter(draw({"formal": 3.0, "terse": 1.0, "casual": 0.0}, rng) for _ in range(4000))
    assert set(counts) == {"formal", "terse"}
    assert 0.72 < counts["formal"] / 4000 < 0.78
    assert draw({}, rng) is None and draw({"short": 0.0}, rng) is None


def test_the_styling_prompt_asks_for_the_drawn_style_and_length() -> None:
    styling = StylingConfig(query_styles={"terse": 1.0}, query_lengths={"long": 1.0})
    prompt = style.build_prompt("What is flour?", styling, None, CTX, query=("terse", "long"))
    assert f"Write the input {QUERY_STYLES['terse']}." in prompt
    assert f"Make it {QUERY_LENGTHS['long']}." in prompt
    plain = style.build_prompt("What is flour?", StylingConfig(task="t"), None, CTX)
    assert "Write the input" not in plain and "Make it" not in plain
    assert query_lines(None, None) == ""


def test_each_input_gets_its_own_seeded_draw_recorded_on_it() -> None:
    styling = StylingConfig(
        query_styles={"formal": 1.0, "misspelled": 1.0}, query_lengths={"short": 1.0}
    )
    asked: list[str] = []

    def model(prompt: str, system: str | None) -> str:
        asked.append(prompt)
        return json.dumps({"input": "restyled"})

    def drafts() -> list[Draft]:
        return [Draft(id=f"d{i}", input=f"Q{i}?", context=CTX) for i in range(40)]

    first = run_sync(style.run(drafts(), FunctionModel(model), styling, seed=5))
    again = run_sync(style.run(drafts(), FunctionModel(lambda p, s: model(p, s)), styling, seed=5))
    other = run_sync(style.run(drafts(), FunctionModel(model), styling, seed=6))
    styles = [d.metadata["query_style"] for d in first]
    assert styles == [d.metadata["query_style"] for d in again]
    assert styles != [d.metadata["query_style"] for d in other]
    assert set(styles) == {"formal", "misspelled"}
    assert {d.metadata["query_length"] for d in first} == {"short"}
    assert len(asked) == 120  # a style alone makes the stage rewrite every input
    for draft, prompt in zip(first, asked[:40], strict=True):
        assert QUERY_STYLES[draft.metadata["query_style"]] in prompt
    assert first[0].styling is None  # the distributions are not copied onto every golden


@pytest.fixture(params=["smart", "generic"])
def server(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest):
    if request.param == "smart":
        fake = fake_openai.FakeOpenAI(reply=synth_replies.reply)
    else:
        fake = fake_openai.FakeOpenAI(mode="generic")
    with fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-query-style-not-a-real-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        yield fake


def test_a_run_records_every_goldens_style_and_length(server) -> None:
    styling = StylingConfig(query_styles={"casual": 1.0, "terse": 1.0}, query_lengths={"short": 1})
    with Synthesizer(styling_config=styling, embedder="hash", grounding_threshold=0.0) as synth:
        dataset = synth.generate_goldens_from_docs(SAMPLE, num_goldens=8)
    assert len(dataset) == 8
    assert {g.metadata["query_style"] for g in dataset} <= {"casual", "terse"}
    assert {g.metadata["query_length"] for g in dataset} == {"short"}
    styled = [r.prompt for r in server.requests_to("chat") if "reads as a real user" in r.prompt]
    assert len(styled) >= 8
    assert all("Make it short: at most 8 words." in p for p in styled)


# ---- Each refusal word for word, each weight's edge, the draw and the prompt lines.


def test_an_unknown_name_is_refused_first_in_sorted_order_with_every_known_name() -> None:
    with pytest.raises(ValueError) as caught:
        check_distribution({"zany": 1.0, "odd": 1.0, "formal": -1}, QUERY_STYLES, "query style")
    assert str(caught.value) == (
        "unknown query style 'odd'; use one of formal, casual, terse, misspelled"
    )


@pytest.mark.parametrize("weight", [-0.5, float("inf"), float("nan"), "1", None])
def test_a_weight_that_is_not_a_finite_non_negative_number_is_refused(weight: object) -> None:
    with pytest.raises(ValueError) as caught:
        check_distribution({"short": 1.0, "long": weight}, QUERY_LENGTHS, "query length")  # type: ignore[dict-item]
    assert str(caught.value) == f"query length 'long' needs a weight >= 0, got {weight!r}"


def test_zero_weights_alone_are_refused_but_one_positive_or_none_at_all_is_fine() -> None:
    with pytest.raises(ValueError) as caught:
        check_distribution({"short": 0, "long": 0.0}, QUERY_LENGTHS, "query length")
    assert str(caught.value) == "at least one query length needs a weight above 0"
    check_distribution({}, QUERY_LENGTHS, "query length")
    check_distribution({"short": 0, "long": 1}, QUERY_LENGTHS, "query length")
    check_distribution({"terse": 0.001}, QUERY_STYLES, "query style")


def test_draw_picks_by_weight_from_the_seeded_rng_skipping_zero_weights() -> None:
    weights = {"formal": 0.0, "casual": 1.0, "terse": 3.0}
    expected = random.Random(7).choices(["casual", "terse"], weights=[1.0, 3.0])[0]
    assert draw(weights, random.Random(7)) == expected
    draws = [draw(weights, random.Random(seed)) for seed in range(30)]
    assert [
        random.Random(s).choices(["casual", "terse"], [1.0, 3.0])[0] for s in range(30)
    ] == draws
    assert draw({"casual": 0.0, "long": 2.0}, random.Random(1)) == "long"
    assert draw({"casual": 0.0}, random.Random(1)) is None


def test_query_lines_says_the_style_then_the_length_each_on_its_own_line() -> None:
    assert query_lines("terse", "short") == (
        "Write the input terse, like a search-engine query: key words only, no full sentence.\n"
        "Make it short: at most 8 words."
    )
    assert query_lines("formal", None) == (
        "Write the input formal and complete, as in a written request to a company."
    )
    assert query_lines(None, "medium") == "Make it of medium length: 9 to 20 words."
    assert query_lines(None, None) == ""


def test_the_styles_and_lengths_are_the_documented_ones() -> None:
    assert list(QUERY_STYLES) == ["formal", "casual", "terse", "misspelled"]
    assert list(QUERY_LENGTHS) == ["short", "medium", "long"]
    assert QUERY_STYLES["misspelled"] == (
        "as typed in a hurry: two or three spelling mistakes or typos, the meaning still clear"
    )
    assert QUERY_STYLES["casual"] == "casual and conversational, as in a chat message to a friend"
    assert (
        QUERY_LENGTHS["long"]
        == "long: more than 20 words, with some background before the question"
    )
