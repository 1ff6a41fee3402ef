"""Citations: quotes located in their chunk's original text, invented ones never; grounding score."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from rapidfuzz import fuzz

from synth.generate._quote_text import NormalText
from synth.generate.citations import (
    CASE_RATIO,
    MIN_RATIO,
    Citation,
    Grounding,
    SourceChunk,
    describe_failures,
    grounding,
    locate,
    locate_all,
)

REFUNDS = SourceChunk(
    chunk_id="refunds",
    text=(
        "Returns and refunds\n\n"
        "The buyer pays the seller within 30 days of delivery of the goods.  Refunds are\n"
        "not available after that. All infor-\nmation about “refund windows” is kept on file — "
        "see section 4.\nA restocking fee of 12500 euros applies to bulk orders. Customers who "
        "are unable to pay may ask for an instal- ment plan. The refundwindow closes at noon "
        "on the last day."
    ),
)
SOLAR = SourceChunk(
    chunk_id="solar",
    text=(
        "Solar panels convert sunlight into electricity using photovoltaic cells.\nEach cell is "
        "made of silicon, which releases electrons when light strikes it. The ‘inverter’ then "
        "turns direct current into alternating current. Their efﬁciency is about 20 percent…"
    ),
)
CHUNKS = [REFUNDS, SOLAR]
# a sentence of a chunk that is not among the ones given
NOT_GIVEN = "Wind turbines convert the kinetic energy of moving air into electricity."

_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "—": "-"})


def norm(text: str) -> str:
    """The test's own normalization: broken words joined, whitespace collapsed, quotes plain."""
    text = re.sub(r"(?<=[a-z])-\s+(?=[a-z])", "", text)
    return " ".join(text.split()).translate(_QUOTES)


EXACT, CASE, FUZZY = "exact", "case", "fuzzy"

LOCATED = [
    (
        "The buyer pays the seller within 30 days of delivery of the goods.",
        REFUNDS,
        "The buyer pays the seller within 30 days of delivery of the goods.",
        EXACT,
    ),
    # a newline in the chunk where the quote has a space
    (
        "Refunds are not available after that.",
        REFUNDS,
        "Refunds are\nnot available after that.",
        EXACT,
    ),
    # extra whitespace and a newline in the quote, blanks around it
    (
        "  Refunds   are not\n available after that.  ",
        REFUNDS,
        "Refunds are\nnot available after that.",
        EXACT,
    ),
    # two spaces in the chunk, one in the quote
    ("goods. Refunds are", REFUNDS, "goods.  Refunds are", EXACT),
    # a word broken across lines, and one broken with a space
    ("All information about", REFUNDS, "All infor-\nmation about", EXACT),
    ("ask for an instalment plan", REFUNDS, "ask for an instal- ment plan", EXACT),
    # curly quotes and an em dash in the chunk, straight ones in the quote
    (
        'information about "refund windows" is kept on file - see section 4.',
        REFUNDS,
        "infor-\nmation about “refund windows” is kept on file — see section 4.",
        EXACT,
    ),
    (
        "The 'inverter' then turns direct current into alternating current.",
        SOLAR,
        "The ‘inverter’ then turns direct current into alternating current.",
        EXACT,
    ),
    # a ligature and an ellipsis character, spelled out in the quote
    (
        "Their efficiency is about 20 percent...",
        SOLAR,
        "Their efﬁciency is about 20 percent…",
        EXACT,
    ),
    (
        "solar panels convert sunlight into electricity",
        SOLAR,
        "Solar panels convert sunlight into electricity",
        CASE,
    ),
    (
        "THE BUYER PAYS THE SELLER",
        REFUNDS,
        "The buyer pays the seller",
        CASE,
    ),
    # a typo in a long word
    (
        "Each cell is made of silicon, which releses electrons when light strikes it.",
        SOLAR,
        "Each cell is made of silicon, which releases electrons when light strikes it.",
        FUZZY,
    ),
    # a comma and the final period left out
    (
        "Each cell is made of silicon which releases electrons when light strikes it",
        SOLAR,
        "Each cell is made of silicon, which releases electrons when light strikes it",
        FUZZY,
    ),
    # words run together in the chunk, apart in the quote
    (
        "The refund window closes at noon",
        REFUNDS,
        "The refundwindow closes at noon",
        FUZZY,
    ),
    # a missing space after a period
    ("goods.Refunds are not available", REFUNDS, "goods.  Refunds are\nnot available", FUZZY),
    # the model kept the line-break hyphen
    (
        "All infor-mation about 'refund windows'",
        REFUNDS,
        "All infor-\nmation about “refund windows”",
        FUZZY,
    ),
]


@pytest.mark.parametrize(("quote", "chunk", "passage", "kind"), LOCATED)
def test_a_quote_is_located_at_its_passage_in_the_original_text(
    quote: str, chunk: SourceChunk, passage: str, kind: str
) -> None:
    citation = locate(quote, CHUNKS)
    assert citation is not None
    assert citation.chunk_id == chunk.chunk_id
    assert citation.quote == quote
    assert chunk.text[citation.start : citation.end] == passage
    assert norm(chunk.text[citation.start : citation.end]) == norm(passage)
    if kind == EXACT:
        assert citation.ratio == 1.0
    elif kind == CASE:
        assert citation.ratio == CASE_RATIO
    else:
        assert MIN_RATIO <= citation.ratio < CASE_RATIO


INVENTED = [
    # the same words, reordered
    "The seller pays the buyer within 30 days of delivery of the goods.",
    "The buyer pays the seller within 30 days of the delivery of goods.",
    # a changed number, short and long
    "The buyer pays the seller within 60 days of delivery of the goods.",
    "A restocking fee of 12600 euros applies to bulk orders.",
    # a negation dropped or added
    "Refunds are available after that.",
    # a short word a letter off is another word ("now" for "not")
    "Refunds are now available after that.",
    "Each cell is not made of silicon, which releases electrons when light strikes it.",
    # a word left out, a word added
    "The buyer pays the seller within 30 days of delivery of goods.",
    "The buyer pays the seller within 30 working days of delivery of the goods.",
    # a word that is only the end of the chunk's word
    "Customers who are able to pay may ask",
    "able to pay may ask for an instalment plan",
    # two words of ten each a letter off ("currant"): more typos than a quote may have
    "The 'invertor' then turns direct currant into alternating current.",
    # many shared words, another sentence
    "The inverter turns sunlight into direct current using silicon cells.",
    "Solar panels convert sunlight into alternating current.",
    NOT_GIVEN,
]


@pytest.mark.parametrize("quote", INVENTED)
def test_an_invented_quote_is_never_located(quote: str) -> None:
    assert locate(quote, CHUNKS) is None


@pytest.mark.parametrize("quote", ["", "   \n", "refunds", "the a", "a 30 b", "i.e. x"])
def test_a_quote_under_two_words_of_two_letters_is_too_short(quote: str) -> None:
    text = SourceChunk(chunk_id="t", text=f"Before. {quote} after.")
    assert locate(quote, [text]) is None


def test_two_short_words_are_enough() -> None:
    citation = locate("30 days", CHUNKS)
    assert citation is not None and REFUNDS.text[citation.start : citation.end] == "30 days"


def test_min_ratio_decides_what_a_fuzzy_match_needs() -> None:
    typo = "Each cell is made of silicon, which releses electrons when light strikes it."
    assert locate(typo, CHUNKS) is not None
    assert locate(typo, CHUNKS, min_ratio=0.995) is None
    # an exact match needs no ratio
    assert locate("Each cell is made of silicon", CHUNKS, min_ratio=1.0) is not None


def test_a_located_quote_never_has_a_ratio_below_min_ratio() -> None:
    # the quote lost a letter: its window scores 100, the whole words it stands for 97.8
    cut = "anels convert sunlight"
    assert (c := locate(cut, CHUNKS)) is not None and c.ratio == 0.9778
    assert SOLAR.text[c.start : c.end] == "panels convert sunlight"
    assert locate(cut, CHUNKS, min_ratio=0.99) is None


def test_a_fuzzy_match_much_longer_than_the_quote_is_refused() -> None:
    padded = SourceChunk(
        chunk_id="padded",
        text="Intro. solar panels ... convert sunlight ... into electricity. More text follows.",
    )
    quote = "solar panels convert sunlight into electricity"
    # same words, in order, ratio 0.92: but the passage is 54 characters for a quote of 46 (+17%)
    assert locate(quote, [padded], min_ratio=0.8) is None
    closer = SourceChunk(chunk_id="closer", text=padded.text.replace("...", "-"))
    assert (c := locate(quote, [closer], min_ratio=0.8)) is not None and c.ratio < 1.0


def test_an_exact_match_wins_over_an_earlier_fuzzy_one_and_ties_go_to_the_first_chunk() -> None:
    sentence = "The warranty covers parts and labour for three years."
    fuzzy = SourceChunk(
        chunk_id="fuzzy", text="The warranty covers parts and labor for three years."
    )
    exact = SourceChunk(chunk_id="exact", text=f"Terms. {sentence}")
    again = SourceChunk(chunk_id="again", text=f"Copy. {sentence}")
    assert (c := locate(sentence, [fuzzy, exact, again])) is not None and c.chunk_id == "exact"
    assert (c := locate(sentence, [fuzzy])) is not None and c.chunk_id == "fuzzy"
    assert (c := locate(sentence, [again, exact])) is not None and c.chunk_id == "again"
    twin = SourceChunk(chunk_id="twin", text=fuzzy.text)
    assert (c := locate(sentence, [fuzzy, twin])) is not None and c.chunk_id == "fuzzy"


def test_the_page_is_the_last_one_starting_at_or_before_the_span() -> None:
    filler = "word " * 10  # 50 characters
    text = filler + "alpha beta gamma " + "x" * 53 + " " + "y" * 8 + " delta epsilon zeta " + filler
    # "alpha" starts at 50, "delta" at 130; page 4 starts at 120
    assert text.index("alpha") == 50 and text.index("delta") == 130
    paged = SourceChunk(chunk_id="p", text=text, pages=((3, 0), (4, 120)))
    assert (c := locate("alpha beta gamma", [paged])) is not None and c.page == 3
    assert (c := locate("delta epsilon zeta", [paged])) is not None and c.page == 4
    # a span starting exactly where a page starts is on that page
    on_boundary = SourceChunk(chunk_id="p", text=text, pages=((3, 0), (4, 130)))
    assert (c := locate("delta epsilon zeta", [on_boundary])) is not None and c.page == 4
    unpaged = SourceChunk(chunk_id="u", text=text)
    assert (c := locate("delta epsilon zeta", [unpaged])) is not None and c.page is None


def test_pages_must_be_sorted_by_offset() -> None:
    with pytest.raises(ValidationError, match="sorted"):
        SourceChunk(chunk_id="p", text="text", pages=((4, 120), (3, 0)))


def test_locate_all_gives_one_entry_per_quote_in_order() -> None:
    quotes = ["30 days of delivery", NOT_GIVEN, "made of silicon", ""]
    citations = locate_all(quotes, CHUNKS)
    assert citations == [locate(quote, CHUNKS) for quote in quotes]
    assert [c.chunk_id if c else None for c in citations] == ["refunds", None, "solar", None]


def test_a_citation_is_a_frozen_json_record() -> None:
    citation = locate("made of silicon", CHUNKS)
    assert citation is not None
    dumped = citation.model_dump(mode="json")
    assert dumped == {
        "quote": "made of silicon",
        "chunk_id": "solar",
        "start": SOLAR.text.index("made of silicon"),
        "end": SOLAR.text.index("made of silicon") + len("made of silicon"),
        "page": None,
        "ratio": 1.0,
    }
    assert Citation.model_validate(dumped) == citation
    with pytest.raises(ValidationError):
        citation.start = 0  # type: ignore[misc]


_WORD = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCÉ’“”—,.;:!?()0123456789", min_size=2, max_size=9
)
_GAP = st.sampled_from([" ", " ", " ", "  ", "\n", "\t", " \n ", "\n\n"])


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.tuples(_WORD, _GAP), min_size=2, max_size=40),
    data=st.data(),
)
def test_any_run_of_words_taken_verbatim_is_located_exactly(
    pieces: list[tuple[str, str]], data: st.DataObject
) -> None:
    # words must hold a letter or digit to count as words; runs of them separated by whitespace
    pieces = [(w if any(c.isalnum() for c in w) else w + "ab", gap) for w, gap in pieces]
    text = "".join(w + gap for w, gap in pieces)
    starts = []
    at = 0
    for w, gap in pieces:
        starts.append(at)
        at += len(w) + len(gap)
    i = data.draw(st.integers(0, len(pieces) - 2))
    j = data.draw(st.integers(i + 1, len(pieces) - 1))
    quote = text[starts[i] : starts[j] + len(pieces[j][0])]
    chunk = SourceChunk(chunk_id="random", text=text)
    for given_quote in (quote, " ".join(quote.split())):
        citation = locate(given_quote, [SourceChunk(chunk_id="other", text="ЖЖ ЖЖ"), chunk])
        if sum(len(w) >= 2 for w in re.findall(r"\w+", quote)) < 2:
            assert citation is None
            continue
        assert citation is not None and citation.chunk_id == "random"
        assert citation.ratio == 1.0
        assert norm(text[citation.start : citation.end]) == norm(quote)


ANSWER = "The buyer pays within 30 days; refunds are not available later."
# its distinct content words: buyer pays within 30 days refunds available later (8)
PAYS = "The buyer pays the seller within 30 days of delivery of the goods."  # 5 of them
REFUNDS_GONE = "Refunds are not available after that."  # 2 more: refunds available


def test_grounding_on_a_hand_computed_example() -> None:
    quotes = [PAYS, REFUNDS_GONE]
    both = grounding(ANSWER, quotes, locate_all(quotes, CHUNKS), CHUNKS)
    assert both == Grounding(score=0.875, quotes=2, found=2, all_found=True)  # 7/8 * 2/2

    quotes = [PAYS, "Refunds are available after that."]  # the second one invented
    citations = locate_all(quotes, CHUNKS)
    assert citations[1] is None
    one = grounding(ANSWER, quotes, citations, CHUNKS)
    assert one == Grounding(score=0.3125, quotes=2, found=1, all_found=False)  # 5/8 * 1/2
    assert one.score < both.score


def test_grounding_counts_a_word_broken_across_lines_in_the_chunk() -> None:
    quotes = ["All information about"]
    result = grounding("information is kept", quotes, locate_all(quotes, CHUNKS), CHUNKS)
    assert result.score == 0.5  # information, not kept


def test_grounding_without_quotes_scores_nothing() -> None:
    assert grounding(ANSWER, [], [], CHUNKS) == Grounding(
        score=0.0, quotes=0, found=0, all_found=False
    )


def test_grounding_refuses_citations_that_do_not_match_the_quotes() -> None:
    citation = locate(PAYS, CHUNKS)
    with pytest.raises(ValueError, match="2 quotes but 1 citations"):
        grounding(ANSWER, [PAYS, PAYS], [citation], CHUNKS)
    with pytest.raises(ValueError, match="refunds"):
        grounding(ANSWER, [PAYS], [citation], [SOLAR])


def test_describe_failures_names_each_quote_not_located_on_one_escaped_line() -> None:
    long_invented = (
        'Refunds are available </context> after that, "always",\nand the rest of a very long '
        "quote that goes on"
    )
    quotes = [PAYS, long_invented, "ok", "  "]
    line = describe_failures(quotes, locate_all(quotes, CHUNKS))
    assert "\n" not in line and "</context>" not in line and "quote 1" not in line
    assert line == (
        'quote 2 ("Refunds are available <\\/context> after that, \\"always\\", an...") '
        "is not in the context; "
        'quote 3 ("ok") is too short to support anything; '
        "quote 4 is empty"
    )
    assert describe_failures([PAYS], locate_all([PAYS], CHUNKS)) == ""


SPACED = "Intro line.\n   Refunds are paid within 30 days.  \n\n  Opened items are not refunded."


@pytest.mark.parametrize(
    ("quote", "passage", "ratio"),
    [
        ("\n   Refunds are paid within 30 days.  \n", "Refunds are paid within 30 days.", 1.0),
        (
            " Refunds are paid within 30 days.\n\n  Opened",
            "Refunds are paid within 30 days.  \n\n  Opened",
            1.0,
        ),
        ("30 days.  \n\n  Opened items", "30 days.  \n\n  Opened items", 1.0),
        ("refunds ARE paid within 30 days.\n ", "Refunds are paid within 30 days.", 0.9999),
        ("Opened items are not refunded.", "Opened items are not refunded.", 1.0),
        ("Intro line. Refunds", "Intro line.\n   Refunds", 1.0),
    ],
)
def test_a_span_never_starts_or_ends_on_the_whitespace_around_its_quote(
    quote: str, passage: str, ratio: float
) -> None:
    found = locate(quote, [SourceChunk(chunk_id="k", text=SPACED)])
    assert found is not None and found.ratio == ratio
    assert SPACED[found.start : found.end] == passage


def test_normal_text_words_overlapping_a_range_are_whole_words_with_their_keys() -> None:
    from synth.generate._quote_text import NormalText, is_word_char, word_key

    normal = NormalText("Don't  e-mail the work-\nflow, ok")
    assert normal.text == "Don't e-mail the workflow, ok"
    every = [
        (0, 5, "don't"),
        (6, 12, "email"),
        (13, 16, "the"),
        (17, 25, "workflow"),
        (27, 29, "ok"),
    ]
    assert normal.tokens(0, len(normal.text)) == every
    assert normal.tokens(7, 9) == [every[1]]  # inside a word: the whole word
    assert normal.tokens(3, 3) == normal.tokens(0, 1) == [every[0]]
    assert normal.tokens(14, 20) == every[2:4]
    assert normal.tokens(len(normal.text) - 1, len(normal.text)) == [every[-1]]
    assert word_key("E-Mail") == "email" and is_word_char("_") and not is_word_char("-")
    # a span of the normalized text maps back to the original's characters, whitespace trimmed
    source = "Don't  e-mail the work-\nflow, ok"
    a, b = normal.original(17, 25, source)
    assert source[a:b] == "work-\nflow"
    a, b = normal.original(5, 12, source)
    assert source[a:b] == "e-mail"


# ---- Citations at their edges: what mutation testing of citations.py and _quote_text.py found
# unchecked.  Each test pins one behaviour: the whitespace trimmed off a span mapped back to the
# original text (one character of it as well as a run), a span of whitespace alone, the words of
# an empty range; matches at a chunk's very ends and one letter into a word, the first of several,
# typos and run-together words at their limits, the punctuation a fuzzy match takes along,
# min_ratio and the 15% length limit reached exactly, the best span of a chunk, ties across
# chunks, grounding past a quote not found, and how a failed quote is shown.


# normalized "ab cd ef ": a newline, a run of mixed whitespace and a final newline, one space each
NORMAL_SPACED = "ab\ncd  \t ef\n"


def test_a_span_mapped_back_loses_exactly_the_whitespace_at_its_ends() -> None:
    normal = NormalText(NORMAL_SPACED)
    assert normal.text == "ab cd ef "

    def back(start: int, end: int) -> str:
        a, b = normal.original(start, end, NORMAL_SPACED)
        return NORMAL_SPACED[a:b]

    # one whitespace character at either end, then a run of four inside kept as it is
    assert back(2, 5) == "cd"
    assert back(0, 3) == "ab"
    assert back(3, 9) == "cd  \t ef"
    assert back(0, len(normal.text)) == NORMAL_SPACED.strip()
    # a span of whitespace alone comes back empty, where the whitespace ends, even at the text's end
    assert normal.original(2, 3, NORMAL_SPACED) == (3, 3)
    assert normal.original(5, 6, NORMAL_SPACED) == (9, 9)
    assert normal.original(8, 9, NORMAL_SPACED) == (len(NORMAL_SPACED), len(NORMAL_SPACED))


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
