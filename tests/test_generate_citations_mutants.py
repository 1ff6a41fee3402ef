"""Citations at their edges: what mutation testing of citations.py and _quote_text.py found unchecked.

Each test pins a behaviour a surviving mutant changed: the whitespace trimmed off a span mapped back
to the original text (one character of it as well as a run), a span of whitespace alone, the words
of an empty range; matches at a chunk's very ends and one letter into a word, the first of several,
typos and run-together words at their limits, the punctuation a fuzzy match takes along, min_ratio
and the 15% length limit reached exactly, the best span of a chunk, ties across chunks, grounding
past a quote not found, and how a failed quote is shown.
"""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from synth.generate._quote_text import NormalText
from synth.generate.citations import (
    MIN_RATIO,
    Grounding,
    SourceChunk,
    describe_failures,
    grounding,
    locate,
    locate_all,
)

# normalized "ab cd ef ": a newline, a run of mixed whitespace and a final newline, one space each
SPACED = "ab\ncd  \t ef\n"


def test_a_span_mapped_back_loses_exactly_the_whitespace_at_its_ends() -> None:
    normal = NormalText(SPACED)
    assert normal.text == "ab cd ef "

    def back(start: int, end: int) -> str:
        a, b = normal.original(start, end, SPACED)
        return SPACED[a:b]

    # one whitespace character at either end, then a run of four inside kept as it is
    assert back(2, 5) == "cd"
    assert back(0, 3) == "ab"
    assert back(3, 9) == "cd  \t ef"
    assert back(0, len(normal.text)) == SPACED.strip()
    # a span of whitespace alone comes back empty, where the whitespace ends, even at the text's end
    assert normal.original(2, 3, SPACED) == (3, 3)
    assert normal.original(5, 6, SPACED) == (9, 9)
    assert normal.original(8, 9, SPACED) == (len(SPACED), len(SPACED))


def test_an_empty_range_on_a_leading_space_overlaps_no_word() -> None:
    normal = NormalText(" ab cd")
    assert normal.text == " ab cd"
    assert normal.tokens(0, 0) == []
    assert normal.tokens(0, 1) == [(1, 3, "ab")]


def _located(
    quote: str, *texts: str, min_ratio: float = MIN_RATIO
) -> tuple[int, str, float] | None:
    """Which text (by position), the passage and the ratio ``quote`` is located at, or None."""
    chunks = [SourceChunk(chunk_id=str(i), text=text) for i, text in enumerate(texts)]
    citation = locate(quote, chunks, min_ratio=min_ratio)
    if citation is None:
        return None
    index = int(citation.chunk_id)
    return index, texts[index][citation.start : citation.end], citation.ratio


def test_an_exact_match_may_touch_either_end_of_a_chunk_that_is_all_words() -> None:
    text = "Refunds are paid within 30 days"
    assert _located("Refunds are paid", text) == (0, "Refunds are paid", 1.0)
    assert _located("within 30 days", text) == (0, "within 30 days", 1.0)


def test_a_match_may_not_start_one_letter_into_a_word_nor_end_before_one() -> None:
    # "ran" is the end of "bran", and too short a word to be a typo of it
    assert _located("ran new shoes", "bran new shoes") is None
    # the quote ends on its period, where the chunk's next word begins at once
    assert _located("Pay now.", "Pay now.Then leave.") == (0, "Pay now.", 1.0)


def test_the_first_occurrence_at_word_bounds_is_taken() -> None:
    text = "Unable to pay? If able to pay, pay now. Anyone able to pay should."
    assert (found := locate("able to pay", [SourceChunk(chunk_id="t", text=text)])) is not None
    assert found.start == text.index("If able") + len("If ")


def test_a_long_word_two_typos_off_is_another_word() -> None:
    text = "Each cell is made of silicon, which releases electrons when light strikes it."
    assert _located(text.replace("releases", "rxleasxs"), text) is None


def test_words_run_together_match_either_way_but_not_beside_another_change() -> None:
    apart = "Notice: the refund window closes at noon on the last day."
    together = "Notice: the refundwindow closes at noon on the last day."
    assert _located("The refundwindow closes at noon", apart) == (
        0,
        "the refund window closes at noon",
        0.9841,
    )
    quote = "The refund window closes at noon on the last day"
    assert _located(quote, together) == (
        0,
        "the refundwindow closes at noon on the last day",
        0.9895,
    )
    # "lest" for "last": a short word changed, after the run-together pair
    assert _located(quote.replace("last", "lest"), together) is None


def test_a_fuzzy_match_takes_the_quotes_own_punctuation_at_its_ends_and_no_more() -> None:
    quote = '"The refund window closes at noon'
    passage = '"The refundwindow closes at noon'
    assert _located(quote, f'He said {passage}." Then') == (0, passage, 0.9846)
    assert _located(quote, f'x ({passage}.") y') == (0, passage, 0.9846)
    # two marks before the words, in the quote and at the very start of the chunk
    assert _located("(" + quote, f'({passage}.")') == (0, "(" + passage, 0.9851)
    # one mark after, where the chunk has two
    assert _located("The refund window closes at noon.", f'({passage}.")') == (
        0,
        "The refundwindow closes at noon.",
        0.9846,
    )


def test_min_ratio_is_reached_by_a_ratio_equal_to_it() -> None:
    text = (
        "Solar panels convert sunlight into electricity using photovoltaic cells. Each cell is "
        "made of silicon, which releases electrons when light strikes it."
    )
    # the first letter left out: the quote is all in the text (partial ratio 100), its words not
    quote = text[text.index("photovoltaic") + 1 :]
    passage = text[text.index("photovoltaic") :]
    ratio = fuzz.ratio(quote.lower(), passage.lower()) / 100
    assert 0.99 < ratio < 1.0
    assert _located(quote, text, min_ratio=ratio) == (0, passage, round(ratio, 4))


def test_a_fuzzy_match_exactly_fifteen_percent_longer_than_the_quote_stands() -> None:
    quote = "solar panels convert sunlight into power"  # 40 characters: 6 more is 15%
    six_more = "solar panels -- convert sunlight -- into power"
    assert _located(quote, f"Intro. {six_more} More.", min_ratio=0.8) == (0, six_more, 0.9302)
    seven_more = "solar panels --- convert sunlight -- into power"
    assert _located(quote, f"Intro. {seven_more} More.", min_ratio=0.8) is None


def test_a_fuzzy_window_that_starts_a_word_early_still_finds_the_words() -> None:
    text = "Intro: the wellknown uptodate handbook of the refundwindow is on the shelf today."
    quote = "well known up to date handbook of the refund window"
    assert _located(quote, text) == (0, "wellknown uptodate handbook of the refundwindow", 0.9592)


def test_the_best_span_of_a_chunk_wins_and_ties_across_chunks_go_to_the_first() -> None:
    # two spans one typo off the quote: the later one scores higher
    assert _located("colour shades", "Paint: colour shadez color shades.") == (
        0,
        "color shades",
        0.96,
    )
    sentence = "The warranty covers parts and labour for three years."
    fuzzy = sentence.replace("labour", "labor")
    assert _located(sentence, fuzzy, f"Copy. {fuzzy}") == (0, fuzzy, 0.9905)
    assert _located(sentence, f"Copy. {fuzzy}", fuzzy) == (0, fuzzy, 0.9905)


def test_grounding_reads_every_citation_past_a_missing_one_and_rounds_to_four_places() -> None:
    chunks = [SourceChunk(chunk_id="s", text="Each cell is made of silicon.")]
    quotes = ["Refunds are paid in full.", "made of silicon"]
    citations = locate_all(quotes, chunks)
    assert citations[0] is None and citations[1] is not None
    # one content word of three covered, one quote of two found: 1/3 * 1/2
    assert grounding("silicon panels glow", quotes, citations, chunks) == Grounding(
        score=0.1667, quotes=2, found=1, all_found=False
    )


def test_a_failed_quote_is_shown_whole_up_to_sixty_characters_and_in_its_own_letters() -> None:
    sixty = "sixty characters " * 3 + "exactly o"
    assert len(sixty) == 60
    cut = "word " * 11 + "a bcdefgh and more"  # the 57th character is a space
    line = describe_failures([sixty, "café crème brûlée", cut], [None, None, None])
    assert line == (
        f'quote 1 ("{sixty}") is not in the context; '
        'quote 2 ("café crème brûlée") is not in the context; '
        f'quote 3 ("{"word " * 11}a...") is not in the context'
    )
    with pytest.raises(ValueError, match="^2 quotes but 1 citations$"):
        describe_failures(["a b", "c d"], [None])
