"""Exact match and token F1 with SQuAD-style normalisation, best over several references."""

from __future__ import annotations

import pytest

from synth import ConfigError, exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  an  apple, a pear  ", "apple pear"),
        ("Theory of the atom", "theory of atom"),  # "the" only as a word
        ("U.S.A.", "usa"),
        ("«Jupiter»…", "jupiter"),  # unicode punctuation too
        ("", ""),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match_after_normalisation_and_over_references() -> None:
    assert exact_match("the Paris.", "Paris") == 1.0
    assert exact_match("Paris, France", "Paris") == 0.0
    assert exact_match("planet jupiter", ["Jupiter", "Planet Jupiter"]) == 1.0
    assert exact_match("Saturn", ["Jupiter", "planet Jupiter"]) == 0.0


def test_token_f1_by_hand() -> None:
    # "paris is capital of france" (5 tokens) against "paris": p=1/5, r=1
    assert token_f1("Paris is the capital of France", "Paris") == pytest.approx(
        2 * (1 / 5) * 1 / (1 / 5 + 1)
    )
    assert token_f1("Paris capital France", "Paris") == pytest.approx(0.5)
    assert token_f1("red red blue", "red blue blue") == pytest.approx(2 / 3)  # counts, not sets
    assert token_f1("Jupiter", ["planet Jupiter", "Jupiter"]) == 1.0  # the best reference counts
    assert token_f1("Mars", "Jupiter") == 0.0


def test_token_f1_empty_sides() -> None:
    assert token_f1("the", "a") == 1.0  # both empty after normalisation
    assert token_f1("", "Paris") == 0.0
    assert token_f1("Paris", "the") == 0.0


def test_references_must_be_given() -> None:
    with pytest.raises(ConfigError):
        exact_match("Paris", [])
    with pytest.raises(ConfigError):
        token_f1("Paris", [1])  # type: ignore[list-item]
