"""What the mutation run of synth/generate/query_style.py found unchecked: each refusal word for
word, each weight's edge, the draw and the prompt lines."""

from __future__ import annotations

import random

import pytest

from synth.generate.query_style import (
    QUERY_LENGTHS,
    QUERY_STYLES,
    check_distribution,
    draw,
    query_lines,
)


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
